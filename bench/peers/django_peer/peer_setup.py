"""Migrates the peer's database and makes the bench user: peer_setup.py EMAIL PASSWORD."""
import os
import sys

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "peer_settings")
import django  # noqa: E402

django.setup()
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402

call_command("migrate", verbosity=0, interactive=False)
get_user_model().objects.create_user(username=sys.argv[1], password=sys.argv[2])
