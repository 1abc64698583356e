# mod_wsgi's entry point for the Django feed; {workroot}/apache is filled in by the harness.
import os

os.environ["FEED_DATABASE"] = "{workroot}/apache/feed.sqlite3"
os.environ["DJANGO_SETTINGS_MODULE"] = "feedsite.settings"

from django.core.wsgi import get_wsgi_application  # noqa: E402

application = get_wsgi_application()
