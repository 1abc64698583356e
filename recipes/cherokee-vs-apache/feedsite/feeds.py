"""The latest entries as RSS 2.0, through Django's syndication framework."""

from django.contrib.syndication.views import Feed

from feedsite.models import Entry


class LatestEntries(Feed):
    title = "Benchmark blog"
    link = "/feeds/"
    description = "The latest entries of a small blog, served as the benchmark's dynamic page."

    def items(self):
        return Entry.objects.order_by("-published")[:15]

    def item_title(self, item: Entry) -> str:
        return item.title

    def item_description(self, item: Entry) -> str:
        return item.body

    def item_link(self, item: Entry) -> str:
        return f"/entries/{item.slug}/"

    def item_pubdate(self, item: Entry):
        return item.published
