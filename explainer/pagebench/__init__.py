"""pagebench: how well a backend's pages answer a versioned question set (`manage.py pagebench`)."""
