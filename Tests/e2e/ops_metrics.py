"""Reading a process's /metrics as Prometheus would: fetched over HTTP and parsed with
prometheus-client's own parser (a malformed exposition fails the parse, not a regex)."""

import urllib.error
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def fetch(url, token=None, timeout=5):
    """(status, content type, body text) of a GET."""
    request = urllib.request.Request(url)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp:
            return resp.status, resp.headers.get("Content-Type"), resp.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type"), error.read().decode("utf-8", "replace")


def parse(text):
    """{family name: family} as prometheus-client parses them (counters lose their _total)."""
    return {family.name: family for family in text_string_to_metric_families(text)}


def scrape(url, token=None):
    status, content_type, body = fetch(url, token)
    assert status == 200, f"GET {url}: {status}\n{body[:500]}"
    assert content_type == CONTENT_TYPE, f"GET {url}: Content-Type {content_type!r}"
    return parse(body)


def value(families, sample_name, **labels):
    """The sum of the samples named `sample_name` whose labels include `labels` (0 if none)."""
    total = 0.0
    for family in families.values():
        for sample in family.samples:
            if sample.name == sample_name and all(sample.labels.get(k) == v for k, v in labels.items()):
                total += sample.value
    return total


def samples(families, sample_name):
    return [s for f in families.values() for s in f.samples if s.name == sample_name]
