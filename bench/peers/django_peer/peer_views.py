from django.contrib.auth.backends import ModelBackend
from django.http import HttpResponse
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView
from rest_framework_simplejwt.serializers import TokenObtainPairSerializer
from rest_framework_simplejwt.views import TokenObtainPairView


class EmailBackend(ModelBackend):
    """Sign-in by email (stored as the username), as the service's body names it."""

    def authenticate(self, request, email=None, password=None, **kwargs):
        return super().authenticate(request, username=email or kwargs.get("username"), password=password)


class EmailPairSerializer(TokenObtainPairSerializer):
    username_field = "email"


class SignIn(TokenObtainPairView):
    serializer_class = EmailPairSerializer


class Me(APIView):
    """The user row behind the access token (simplejwt's JWTAuthentication reads it)."""
    permission_classes = [IsAuthenticated]

    def get(self, request):
        user = request.user
        return Response({"data": {"uid": str(user.pk), "email": user.username, "date_joined": user.date_joined}})


def healthz(request):
    return HttpResponse(b'{"status":"ok"}', content_type="application/json")
