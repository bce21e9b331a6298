from django.urls import path

from . import views

urlpatterns = [
    path("", views.home, name="home"),
    path("market/", views.market, name="market"),
    path("market/buy/<int:item_id>/", views.buy, name="buy"),
    path("market/buy-unlocked/<int:item_id>/", views.buy_unlocked, name="buy-unlocked"),
    path("market/stampede/<int:item_id>/", views.stampede, name="stampede"),
    path("market/reset/", views.reset, name="market-reset"),
]
