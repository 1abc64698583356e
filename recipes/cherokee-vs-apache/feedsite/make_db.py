"""Create the feed's SQLite database with fixed entries (the same feed every run).

Usage: python -m feedsite.make_db DATABASE_PATH
"""

import os
import sys
from datetime import UTC, datetime, timedelta

os.environ["FEED_DATABASE"] = sys.argv[1]
os.environ["DJANGO_SETTINGS_MODULE"] = "feedsite.settings"

import django

django.setup()

from django.core.management import call_command  # noqa: E402

from feedsite.models import Entry  # noqa: E402

WORDS = ("server", "request", "latency", "thread", "socket", "python", "feed", "cache", "kernel", "queue")

call_command("migrate", run_syncdb=True, verbosity=0)
start = datetime(2008, 3, 1, tzinfo=UTC)
for number in range(15):
    body = " ".join(WORDS[(number + i) % len(WORDS)] for i in range(100))
    Entry.objects.create(
        title=f"Entry number {number}", slug=f"entry-{number}", body=body, published=start + timedelta(days=number)
    )
