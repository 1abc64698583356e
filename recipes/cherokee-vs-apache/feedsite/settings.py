"""Django settings: one app, an SQLite database named by FEED_DATABASE, no middleware."""

import os

SECRET_KEY = "benchmark-only-not-a-secret"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = ["feedsite"]
MIDDLEWARE: list[str] = []
ROOT_URLCONF = "feedsite.urls"
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["FEED_DATABASE"]}}
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
USE_TZ = True
TIME_ZONE = "UTC"
