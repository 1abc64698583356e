from django.urls import path

from feedsite.feeds import LatestEntries

# "feeds/" behind an SCGI front end; "" under mod_wsgi, where the alias /feeds is the script name.
urlpatterns = [path("feeds/", LatestEntries()), path("", LatestEntries())]
