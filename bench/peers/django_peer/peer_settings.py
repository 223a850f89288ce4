"""Django + djangorestframework-simplejwt as a peer in make bench: RS256 access tokens, refresh
rotation with the blacklist, Argon2id at the service's cost. Configured from PEER_* variables
(bench/run.py sets them)."""
import os
from urllib.parse import urlparse

from django.contrib.auth.hashers import Argon2PasswordHasher

DEBUG = False
SECRET_KEY = os.environ["PEER_SECRET"]
ALLOWED_HOSTS = ["*"]
ROOT_URLCONF = "peer_urls"
USE_TZ = True
INSTALLED_APPS = ["django.contrib.contenttypes", "django.contrib.auth", "rest_framework",
                  "rest_framework_simplejwt.token_blacklist"]
MIDDLEWARE = []
_db = urlparse(os.environ["PEER_DATABASE_URL"])
DATABASES = {"default": {"ENGINE": "django.db.backends.postgresql", "NAME": _db.path.lstrip("/"),
                         "USER": _db.username, "PASSWORD": _db.password, "HOST": _db.hostname, "PORT": _db.port,
                         "CONN_MAX_AGE": None}}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"


class BenchArgon2Hasher(Argon2PasswordHasher):
    """Argon2id at the service's cost (m=19 MiB, t=2, p=1 by default)."""
    memory_cost = int(os.environ.get("PEER_ARGON2_MEMORY_KIB", "19456"))
    time_cost = int(os.environ.get("PEER_ARGON2_ITERATIONS", "2"))
    parallelism = int(os.environ.get("PEER_ARGON2_PARALLELISM", "1"))


PASSWORD_HASHERS = ["peer_settings.BenchArgon2Hasher"]
AUTHENTICATION_BACKENDS = ["peer_views.EmailBackend"]
REST_FRAMEWORK = {"DEFAULT_AUTHENTICATION_CLASSES": ["rest_framework_simplejwt.authentication.JWTAuthentication"],
                  "DEFAULT_PERMISSION_CLASSES": [], "UNAUTHENTICATED_USER": None}
SIMPLE_JWT = {"ALGORITHM": "RS256", "SIGNING_KEY": os.environ["PEER_PRIVATE_PEM"],
              "VERIFYING_KEY": os.environ["PEER_PUBLIC_PEM"], "ROTATE_REFRESH_TOKENS": True,
              "BLACKLIST_AFTER_ROTATION": True, "UPDATE_LAST_LOGIN": False, "AUTH_HEADER_TYPES": ("Bearer",)}
LOGGING = {"version": 1, "disable_existing_loggers": False, "root": {"level": "WARNING"}}
