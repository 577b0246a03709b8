"""Test-session settings shared by the whole suite."""

import os

from hypothesis import settings

# CI proves main on a fresh machine: the examples hypothesis draws there must be the
# same on every run, so that a red run means a change broke something and not that a
# new random draw found an old corner. Local runs keep exploring (and keep what they
# find in .hypothesis/), which is where new corners are meant to turn up.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
