"""From Scratch settings: one module, every value from the environment.

Defaults suit a laptop (`make run`): SQLite, the filesystem Celery broker and mail written to
files, all under ``var/``. Production sets ``DEBUG=0`` and real values; anything missing or
malformed there stops the process at start-up with a message naming the variable.
"""

from __future__ import annotations

import os
from pathlib import Path

import environ
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()

# Tests get their own var/ folder so that a running `make run` never shares a database file or a
# broker folder with them (pytest sets PYTEST_VERSION for the run and its subprocesses).
_default_var = BASE_DIR / "var" / "test" if "PYTEST_VERSION" in os.environ else BASE_DIR / "var"
VAR_DIR = Path(env.str("VAR_DIR", default=str(_default_var))).resolve()

_BOOLEANS = {
    "1": True,
    "true": True,
    "yes": True,
    "on": True,
    "0": False,
    "false": False,
    "no": False,
    "off": False,
}
_debug = env.str("DEBUG", default="1").strip().lower()
if _debug not in _BOOLEANS:
    raise ImproperlyConfigured(f"DEBUG must be 0 or 1 (or true/false), not {_debug!r}.")
DEBUG = _BOOLEANS[_debug]

_DEV_SECRET = "dev-only-insecure-key-never-use-in-production-4c1f9a"  # noqa: S105
SECRET_KEY = env.str("SECRET_KEY", default=_DEV_SECRET if DEBUG else "")
if not DEBUG and (not SECRET_KEY or SECRET_KEY == _DEV_SECRET or len(SECRET_KEY) < 50):
    raise ImproperlyConfigured(
        "SECRET_KEY must be set to a random string of at least 50 characters when DEBUG=0."
    )

ALLOWED_HOSTS = env.list(
    "ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]", "testserver"] if DEBUG else []
)
if not DEBUG and not ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS must list the site's host names when DEBUG=0.")

SITE_URL = env.str("SITE_URL", default="http://127.0.0.1:8000").rstrip("/")
if not SITE_URL.startswith(("http://", "https://")):
    raise ImproperlyConfigured("SITE_URL must start with http:// or https://")
SITE_NAME = "From Scratch"

INSTALLED_APPS = [
    "platform.apps.PlatformConfig",
    "courses",
    "notebook",
    "newsletter",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.sites",
    # runserver hands static files to whitenoise's middleware, as gunicorn does in production,
    # instead of its own handler (which answered /static/%2e%2e/… with a 500).
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django.contrib.postgres",
    "allauth",
    "allauth.account",
    "django_htmx",
    "template_partials",
    "django_celery_beat",
    "simple_history",
    "csp",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Below whitenoise (which answers static files itself, precompressed) and above everything
    # that reads or writes the body. Django's GZip pads its output with random bytes, the BREACH
    # mitigation, and pages carry the CSRF token; responses that are already encoded pass.
    "django.middleware.gzip.GZipMiddleware",
    "csp.middleware.CSPMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
]

ROOT_URLCONF = "platform.urls"
WSGI_APPLICATION = "platform.wsgi.application"
ASGI_APPLICATION = "platform.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "platform.context_processors.site",
            ],
            "builtins": ["template_partials.templatetags.partials"],
        },
    }
]

# --- Database -------------------------------------------------------------------------------
DATABASES = {
    "default": env.db_url("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}"),
}
_db = DATABASES["default"]
if _db["ENGINE"] == "django.db.backends.sqlite3":
    # The web server and the Celery worker share the file: WAL lets readers run beside a writer,
    # IMMEDIATE transactions take the write lock up front instead of failing half-way.
    _db["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
    }
    # A file, not :memory:, so that a Celery worker started by a test sees the test database.
    _db["TEST"] = {"NAME": str(VAR_DIR / "test-db.sqlite3")}
elif _db["ENGINE"] == "django.db.backends.postgresql":
    _db["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
    _db["CONN_HEALTH_CHECKS"] = True
else:
    raise ImproperlyConfigured("DATABASE_URL must be a sqlite:// or postgres:// URL.")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
ON_POSTGRES = _db["ENGINE"] == "django.db.backends.postgresql"

# --- Redis, cache and Celery ------------------------------------------------------------------
REDIS_URL = env.str("REDIS_URL", default="")
if REDIS_URL and not REDIS_URL.startswith(("redis://", "rediss://")):
    raise ImproperlyConfigured("REDIS_URL must start with redis:// or rediss://")

CELERY_BROKER_DIR = VAR_DIR / "celery"
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "fs",
            "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
        }
    }
    CELERY_BROKER_URL = REDIS_URL
    CELERY_RESULT_BACKEND = REDIS_URL
    # A chunk that a dead worker had taken is handed out again after this many seconds; every
    # task's run time and retry countdown stay well under it (see newsletter/tasks.py).
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=300),
        "socket_connect_timeout": 2,
    }
    CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS = {"socket_connect_timeout": 2}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(CELERY_BROKER_DIR / "queue"),
        "data_folder_out": str(CELERY_BROKER_DIR / "queue"),
        "processed_folder": str(CELERY_BROKER_DIR / "processed"),
        "control_folder": str(CELERY_BROKER_DIR / "control"),
        "store_processed": False,
    }
    CELERY_RESULT_BACKEND = f"file://{CELERY_BROKER_DIR / 'results'}"

CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_TIMEZONE = "UTC"
CELERY_TASK_ALWAYS_EAGER = False

# --- Email ----------------------------------------------------------------------------------
EMAIL_URL = env.str("EMAIL_URL", default="")
if EMAIL_URL:
    _email = env.email_url_config(EMAIL_URL)
    EMAIL_BACKEND = _email.pop("EMAIL_BACKEND")
    EMAIL_FILE_PATH = str(VAR_DIR / "mail")
    globals().update(_email)
else:
    EMAIL_BACKEND = "django.core.mail.backends.filebased.EmailBackend"
    EMAIL_FILE_PATH = str(VAR_DIR / "mail")
EMAIL_TIMEOUT = env.int("EMAIL_TIMEOUT", default=20)
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="From Scratch <hello@fromscratch.test>")
SERVER_EMAIL = DEFAULT_FROM_EMAIL

# --- Accounts -------------------------------------------------------------------------------
AUTH_USER_MODEL = "platform.User"
AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]
PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher",
    "django.contrib.auth.hashers.ScryptPasswordHasher",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
SITE_ID = 1
LOGIN_URL = "account_login"
LOGIN_REDIRECT_URL = "home"
ACCOUNT_LOGIN_METHODS = {"email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "password1*", "password2*"]
ACCOUNT_EMAIL_VERIFICATION = "mandatory"
ACCOUNT_UNIQUE_EMAIL = True
ACCOUNT_PREVENT_ENUMERATION = True
ACCOUNT_CHANGE_EMAIL = True
# Following the link in the browser that signed up logs the learner in and returns them to the
# page they signed up from (``next``), instead of asking for the password again.
ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION = True
ACCOUNT_USER_DISPLAY = "platform.accounts.user_display"
ACCOUNT_FORMS = {"login": "platform.accounts.LoginForm", "signup": "platform.accounts.SignupForm"}
ACCOUNT_CONFIRM_EMAIL_ON_GET = False
ACCOUNT_EMAIL_SUBJECT_PREFIX = "[From Scratch] "
ACCOUNT_DEFAULT_HTTP_PROTOCOL = "https" if SITE_URL.startswith("https://") else "http"
ACCOUNT_LOGOUT_ON_PASSWORD_CHANGE = False
ACCOUNT_ADAPTER = "platform.accounts.AccountAdapter"
# allauth's defaults, spelled out: five failed logins per account in five minutes, ten per
# minute per address. One counter per account, whatever spelling reached it, shared by the site
# login, the admin login and the delete-account password check (platform/accounts.py).
ACCOUNT_RATE_LIMITS = {"login_failed": "10/m/ip,5/300s/key"}
# The one client-IP rule of every rate limit (allauth's and the newsletter's): 0 = REMOTE_ADDR;
# N = the Nth address from the right of X-Forwarded-For, for N proxies of ours in front (each
# appends the address it saw). Anything a client writes further left is ignored.
TRUSTED_PROXY_COUNT = env.int("TRUSTED_PROXY_COUNT", default=0)
if not 0 <= TRUSTED_PROXY_COUNT <= 10:
    raise ImproperlyConfigured("TRUSTED_PROXY_COUNT must be 0 (no proxy) to 10.")
ALLAUTH_TRUSTED_PROXY_COUNT = TRUSTED_PROXY_COUNT

# --- Security -------------------------------------------------------------------------------
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # htmx reads no cookie; the token travels in hx-headers
if not DEBUG:
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    if env.bool("BEHIND_TLS_PROXY", default=False):
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[SITE_URL])

CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
        "base-uri": [SELF],
        "object-src": [NONE],
    }
}

# --- Static files, i18n ---------------------------------------------------------------------
STATIC_URL = "/static/"
STATIC_ROOT = VAR_DIR / "static"
# In development whitenoise serves straight from the apps' static folders and sees edits.
WHITENOISE_USE_FINDERS = DEBUG
WHITENOISE_AUTOREFRESH = DEBUG
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}
LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}

# Models whose permissions the "Editors" group receives (platform/editors.py keeps them in sync).
EDITOR_APPS = ["courses", "notebook", "newsletter", "django_celery_beat"]

for _folder in (
    VAR_DIR,
    STATIC_ROOT,
    *(CELERY_BROKER_DIR / d for d in ("queue", "processed", "control")),
):
    _folder.mkdir(parents=True, exist_ok=True)
if not REDIS_URL:
    (CELERY_BROKER_DIR / "results").mkdir(parents=True, exist_ok=True)
if EMAIL_BACKEND == "django.core.mail.backends.filebased.EmailBackend":
    Path(EMAIL_FILE_PATH).mkdir(parents=True, exist_ok=True)

# --- newsletter -----------------------------------------------------------------------------
# Sending (services/sending.py): recipients are frozen into Delivery rows, then sent in chunks
# of NEWSLETTER_CHUNK_SIZE over one SMTP connection each. A chunk stops after
# NEWSLETTER_CHUNK_TIME_LIMIT seconds and re-queues the rest; its claim on its rows (a lease)
# lasts twice that. Temporary SMTP failures (4xx) are retried after NEWSLETTER_RETRY_BACKOFF ×
# 3^(attempt-1) seconds, capped at NEWSLETTER_RETRY_MAX_DELAY, at most NEWSLETTER_MAX_ATTEMPTS
# times. The sweeper runs every NEWSLETTER_SWEEP_INTERVAL seconds and re-queues deliveries left
# untouched for NEWSLETTER_STALE_AFTER seconds (a lost task, an emptied Redis).
NEWSLETTER_CHUNK_SIZE = env.int("NEWSLETTER_CHUNK_SIZE", default=200)
NEWSLETTER_CHUNK_TIME_LIMIT = env.int("NEWSLETTER_CHUNK_TIME_LIMIT", default=60)
NEWSLETTER_RETRY_BACKOFF = env.int("NEWSLETTER_RETRY_BACKOFF", default=10)
NEWSLETTER_RETRY_MAX_DELAY = env.int("NEWSLETTER_RETRY_MAX_DELAY", default=120)
NEWSLETTER_MAX_ATTEMPTS = env.int("NEWSLETTER_MAX_ATTEMPTS", default=5)
NEWSLETTER_SWEEP_INTERVAL = env.int("NEWSLETTER_SWEEP_INTERVAL", default=60)
NEWSLETTER_STALE_AFTER = env.int("NEWSLETTER_STALE_AFTER", default=180)
NEWSLETTER_FROM_EMAIL = env.str("NEWSLETTER_FROM_EMAIL", default=DEFAULT_FROM_EMAIL)
NEWSLETTER_LIST_ID = env.str(
    "NEWSLETTER_LIST_ID", default="From Scratch weekly <weekly.fromscratch.test>"
)
NEWSLETTER_UNSUBSCRIBE_MAILTO = env.str(
    "NEWSLETTER_UNSUBSCRIBE_MAILTO", default="unsubscribe@fromscratch.test"
)
NEWSLETTER_CONFIRM_MAX_AGE = env.int("NEWSLETTER_CONFIRM_MAX_AGE", default=3 * 24 * 3600)
NEWSLETTER_SIGNUP_LIMIT_PER_IP = env.int("NEWSLETTER_SIGNUP_LIMIT_PER_IP", default=20)
NEWSLETTER_SIGNUP_LIMIT_PER_ADDRESS = env.int("NEWSLETTER_SIGNUP_LIMIT_PER_ADDRESS", default=3)
NEWSLETTER_SIGNUP_WINDOW = env.int("NEWSLETTER_SIGNUP_WINDOW", default=3600)
if REDIS_URL:
    _visibility = CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]
    if (
        _visibility < NEWSLETTER_CHUNK_TIME_LIMIT * 3
        or _visibility < NEWSLETTER_RETRY_MAX_DELAY * 2
    ):
        raise ImproperlyConfigured(
            "CELERY_VISIBILITY_TIMEOUT must be at least 3 × NEWSLETTER_CHUNK_TIME_LIMIT and "
            "2 × NEWSLETTER_RETRY_MAX_DELAY, or Redis hands a running chunk to a second worker."
        )

# --- notebook -------------------------------------------------------------------------------
# Limits of one snippet check run (platform/sandbox.py), each for the whole run across all of
# its processes: wall-clock seconds, memory in MB (its tmpfs included), bytes of stdout+stderr
# it may print before it is stopped, processes and threads, and MB of writable /tmp.
SNIPPET_TIME_LIMIT = env.float("SNIPPET_TIME_LIMIT", default=10.0)
SNIPPET_MEMORY_LIMIT_MB = env.int("SNIPPET_MEMORY_LIMIT_MB", default=512)
SNIPPET_MAX_OUTPUT_BYTES = env.int("SNIPPET_MAX_OUTPUT_BYTES", default=64_000)
SNIPPET_MAX_PROCESSES = env.int("SNIPPET_MAX_PROCESSES", default=32)
SNIPPET_DISK_MB = env.int("SNIPPET_DISK_MB", default=16)
if (
    SNIPPET_TIME_LIMIT <= 0
    or SNIPPET_MEMORY_LIMIT_MB < 64
    or SNIPPET_MAX_OUTPUT_BYTES < 1024
    or SNIPPET_MAX_PROCESSES < 1
    or SNIPPET_DISK_MB < 1
):
    raise ImproperlyConfigured(
        "SNIPPET_TIME_LIMIT must be > 0, SNIPPET_MEMORY_LIMIT_MB >= 64, "
        "SNIPPET_MAX_OUTPUT_BYTES >= 1024, SNIPPET_MAX_PROCESSES and SNIPPET_DISK_MB >= 1."
    )
# The sandbox: the bubblewrap binary, the cgroup under which each run gets its own (relative to
# the worker's own cgroup, or absolute in the hierarchy; empty: the worker's own) and the
# installed distributions a snippet may import (bound read-only; nothing else of site-packages).
SANDBOX_BWRAP = env.str("SANDBOX_BWRAP", default="/usr/bin/bwrap")
SANDBOX_CGROUP = env.str("SANDBOX_CGROUP", default="")
SANDBOX_PACKAGES = env.list("SANDBOX_PACKAGES", default=["numpy"])
NOTEBOOK_PAGE_SIZE = env.int("NOTEBOOK_PAGE_SIZE", default=10)
