"""E.164 normalisation held to the PyPI `phonenumbers` package (libphonenumber), the oracle: for
every region, a few thousand numbers generated from the region's example numbers (each type's
example with its last digits randomised, kept when phonenumbers calls it valid) go through
`identityctl phone normalize` — the same `PhoneNumber` code the gateway and the token worker run —
in E.164, in international format with separators, and in national format with the region (ISO
code and calling code). Also numbers of impossible lengths, which both must refuse. Needs no
running service."""

import os
import random
import subprocess

import phonenumbers
from phonenumbers import PhoneNumberFormat, PhoneNumberType

PER_REGION = int(os.environ.get("PHONE_ORACLE_PER_REGION", "1000"))
TYPES = [PhoneNumberType.MOBILE, PhoneNumberType.FIXED_LINE, PhoneNumberType.TOLL_FREE,
         PhoneNumberType.PREMIUM_RATE, PhoneNumberType.VOIP, PhoneNumberType.UAN,
         PhoneNumberType.PERSONAL_NUMBER, PhoneNumberType.PAGER, PhoneNumberType.SHARED_COST]


def _generated(region, rng):
    examples = [e for e in (phonenumbers.example_number_for_type(region, t) for t in TYPES) if e]
    found, tries = [], 0
    while examples and len(found) < PER_REGION and tries < PER_REGION * 6:
        tries += 1
        example = rng.choice(examples)
        national = str(example.national_number)
        keep = max(1, len(national) - rng.randint(2, 6))
        digits = national[:keep] + "".join(rng.choice("0123456789") for _ in national[keep:])
        candidate = phonenumbers.PhoneNumber(country_code=example.country_code, national_number=int(digits),
                                             italian_leading_zero=example.italian_leading_zero)
        if phonenumbers.is_valid_number(candidate):
            found.append(candidate)
    return found


def _normalize(stack, lines):
    done = subprocess.run([stack_binary("identityctl"), "phone", "normalize"], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, timeout=600, env={**os.environ})
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert len(out) == len(lines), (len(out), len(lines))
    return out


def stack_binary(name):
    return os.path.join(os.environ["IDENTITY_BIN_DIR"], name)


def test_normalisation_agrees_with_phonenumbers_over_generated_numbers():
    rng = random.Random(15)
    cases = []  # (country, input, expected E.164 or "-")
    for region in sorted(phonenumbers.SUPPORTED_REGIONS):
        code = str(phonenumbers.country_code_for_region(region))
        for number in _generated(region, rng):
            e164 = phonenumbers.format_number(number, PhoneNumberFormat.E164)
            cases.append(("", e164, e164))
            cases.append(("", phonenumbers.format_number(number, PhoneNumberFormat.INTERNATIONAL), e164))
            national = phonenumbers.format_number(number, PhoneNumberFormat.NATIONAL)
            # The oracle's own reading of the national form (it may differ from the number it
            # came from where the national form is ambiguous): ours must read it the same way.
            for country in (region, "+" + code):
                try:
                    parsed = phonenumbers.parse(national, region)
                    expected = phonenumbers.format_number(parsed, PhoneNumberFormat.E164) \
                        if phonenumbers.is_possible_number(parsed) else "-"
                except phonenumbers.NumberParseException:
                    expected = "-"
                if country.startswith("+") and phonenumbers.region_code_for_country_code(int(code)) != region:
                    continue  # a shared calling code names its main region's rules, not this region's
                cases.append((country, national, expected))
        # Impossible lengths: far too short and far too long.
        cases.append(("", "+" + code + "1", "-"))
        cases.append(("", "+" + code + "9" * (17 - len(code)), "-"))
    out = _normalize(None, [f"{country}\t{number}" for country, number, _ in cases])
    mismatches = [(c, n, e, got) for (c, n, e), got in zip(cases, out) if got != e]
    by_region = {}
    for country, number, expected, got in mismatches:
        by_region.setdefault(country or expected[:4], []).append((number, expected, got))
    print(f"phone oracle: {len(cases)} inputs over {len(phonenumbers.SUPPORTED_REGIONS)} regions, "
          f"{len(mismatches)} differences")
    assert len(cases) > 100_000, len(cases)
    assert not mismatches, (f"{len(mismatches)} of {len(cases)} differ from phonenumbers; first per region: "
                            + "; ".join(f"{k}: {v[0]} ({len(v)})" for k, v in list(by_region.items())[:30]))
