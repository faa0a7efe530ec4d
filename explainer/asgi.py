"""ASGI entry point: HTTP through Django, websockets through Channels."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "explainer.settings.dev")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from explainer import warmup  # noqa: E402
from explainer.pages.static import CorsStaticFilesASGIHandler  # noqa: E402
from explainer.routing import websocket_urlpatterns  # noqa: E402
from explainer.socket_origin import SameOriginValidator  # noqa: E402

# Build the library index (BM25 and the sentence embeddings of every page, a few seconds) while the
# server starts, so that the first learner's question does not wait for it; /readyz waits for it.
warmup.start()

application = ProtocolTypeRouter(
    {
        # static/ with the CORS header sandboxed pages need for their module imports; run Daphne's
        # runserver with --nostatic, or its own static handler answers first, without that header.
        "http": CorsStaticFilesASGIHandler(django_asgi_app),
        "websocket": SameOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
