from django.urls import path

from explainer.consumers import ExplainConsumer

websocket_urlpatterns = [
    path("ws/explain/", ExplainConsumer.as_asgi()),
]
