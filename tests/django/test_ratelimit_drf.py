"""The DRF throttle: DRF's own 429 and Retry-After, decided by the shared limiter."""

from __future__ import annotations

import pytest
from rest_framework.response import Response  # djangorestframework is in the dev extra
from rest_framework.test import APIRequestFactory
from rest_framework.views import APIView

from django_redcoord.contrib.drf import RedisThrottle


class TwoPerMinute(RedisThrottle):
    policy = "2/m"
    key = "ip"


class Orders(APIView):
    authentication_classes: list = []
    permission_classes: list = []
    throttle_classes = [TwoPerMinute]

    def get(self, request):
        return Response({"ok": True})


def test_the_throttle_refuses_past_the_policy_with_drfs_own_answer():
    view, factory = Orders.as_view(), APIRequestFactory()
    answers = [view(factory.get("/orders/")) for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert 1 <= int(answers[2]["Retry-After"]) <= 30


def test_a_throttle_without_a_policy_says_what_to_set():
    class Unset(RedisThrottle):
        pass

    with pytest.raises(TypeError, match="must set policy"):
        Unset()
