from django.urls import path
from rest_framework_simplejwt.views import TokenRefreshView

import peer_views

# The service's paths, so the same wrk scripts drive both.
urlpatterns = [
    path("healthz", peer_views.healthz),
    path("v1/auth/sign-in", peer_views.SignIn.as_view()),
    path("v1/auth/token/refresh", TokenRefreshView.as_view()),
    path("v1/me", peer_views.Me.as_view()),
]
