"""A minimal Django site whose one page is an RSS feed, like the original benchmark's /feeds/."""
