"""Operations: the rpcs of proto/identity/gateway/v1/gateway.proto and their `operation` options.

operations() checks each declaration and reads it into an Operation; the tables here say what
a declared access, answer, error or package means in Swift, and the small Swift spellings
(names, string literals, doc comments, the header) are shared by the workers' and the
gateway's emitters.
"""
import json, re
from dataclasses import dataclass, field

from .descriptors import MARKER, ProtoError, namespace


ACCESS_SWIFT = {"PUBLIC": "public", "APP_KEY": "appKey", "GUEST": "guest", "BEARER": "bearer",
                "BEARER_FRESH": "bearerFresh", "BEARER_FRESH_OR_PASSWORD": "bearerFreshOrPassword",
                "BEARER_OWN_PROOF": "bearerOwnProof", "SECRET_KEY": "secretKey", "INTERNAL": "internal",
                "BEARER_OPTIONAL": "bearerOptional", "CONSOLE_OWNER": "consoleOwner"}
# The worker's half of each access (FreshProofRule in IdentityTokenWorker), when it has one.
FRESH_RULE = {"BEARER_FRESH": ".freshSignIn", "BEARER_FRESH_OR_PASSWORD": ".freshSignInOrPassword(command.password)",
              "BEARER_OWN_PROOF": ".stepUpWhenMfaOn"}
# Which worker consumes a command, by the package of its message.
WORKER_OF_PACKAGE = {"identity.token.v1": "token", "identity.admin.v1": "token", "identity.revocation.v1": "revocation",
                     "identity.provider.v1": "provider", "identity.mailer.v1": "mailer"}
# Errors that take arguments in Swift: code -> the expression the declaration means.
ERROR_CALLS = {"auth/validation-failed": ".validationFailed([])", "auth/rate-limited": ".rateLimited(retryAfter: 1)",
               "auth/weak-password": '.weakPassword("")', "auth/invalid-email": ".invalidEmail()",
               "auth/invalid-phone-number": ".invalidPhoneNumber()"}
# A generated handler's answers: name -> (the reply type it renders, DeclaredAnswer's renderer).
ANSWERS = {"user": ("identity.token.v1.UserResult", "DeclaredAnswer.user"),
           "accepted": ("identity.token.v1.Accepted", "DeclaredAnswer.accepted"),
           "done": ("identity.token.v1.Done", "DeclaredAnswer.done"),
           "signed_in": ("identity.token.v1.AuthResult", "DeclaredAnswer.signedIn(status: {status})"),
           "code_check": ("identity.token.v1.CodeCheck", "DeclaredAnswer.codeCheck"),
           "backup_codes": ("identity.token.v1.BackupCodes", "DeclaredAnswer.backupCodes"),
           "totp_enrolment": ("identity.token.v1.TotpEnrolment", "DeclaredAnswer.totpEnrolment"),
           "mfa_status": ("identity.token.v1.MfaStatus", "DeclaredAnswer.mfaStatus"),
           "tokens": ("identity.token.v1.AuthResult", "DeclaredAnswer.tokens"),
           "phone_code_sent": ("identity.token.v1.PhoneCodeSent", "DeclaredAnswer.phoneCodeSent"),
           "device": ("identity.token.v1.DeviceResult", "DeclaredAnswer.device(status: {status})"),
           "passkey": ("identity.token.v1.PasskeyResult", "DeclaredAnswer.passkey(status: {status})"),
           "passkey_sign_in_options": ("identity.token.v1.PasskeyOptions", "DeclaredAnswer.passkeySignInOptions"),
           "passkey_options": ("identity.token.v1.PasskeyOptions", "DeclaredAnswer.passkeyOptions"),
           "passkey_list": ("identity.token.v1.PasskeyList", "DeclaredAnswer.passkeyList")}
# The shared response (answers.proto's shapes) each answer is documented with (none: 204).
ANSWER_RESPONSES = {"user": "User", "accepted": "Queued", "done": None, "signed_in": "SignedIn",
                    "code_check": "CodeCheck", "backup_codes": "BackupCodes", "totp_enrolment": "TotpEnrolment",
                    "mfa_status": "MfaStatus", "tokens": "SignedIn", "phone_code_sent": "PhoneCodeSent",
                    "device": "Device", "passkey": "Passkey", "passkey_sign_in_options": "PasskeySignInOptions",
                    "passkey_options": "PasskeyOptions", "passkey_list": "Passkeys"}
# The queue of each worker's commands, by the package of their messages (the token worker's is the default).
QUEUE_OF_PACKAGE = {"identity.revocation.v1": "BusTopology.revocationCommands",
                    "identity.provider.v1": "BusTopology.providerCommands"}


@dataclass
class Operation:
    service: str
    name: str          # the rpc's name, e.g. SignUp
    doc: list
    input: str         # full proto name of the command, or identity.gateway.v1.Served
    output: str
    access: str        # an Access value name
    method: str = ""
    path: str = ""
    status: int = 200
    body: bool = False
    limits: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    audit: str = ""
    session_checked_by_handler: bool = False
    only_adds_sessions: bool = False
    session_end: bool = False
    where: str = ""
    summary: str = ""
    description: str = ""
    request: str = ""
    response: str = ""
    parameters: list = field(default_factory=list)
    answer: str = ""
    mfa_challenge: bool = False
    fixed: dict = field(default_factory=dict)
    path_fields: dict = field(default_factory=dict)  # command field -> path parameter
    service_doc: list = field(default_factory=list)  # the service's comment: its tag's description


def lower_camel(name):
    return name[0].lower() + name[1:]


def camel(snake):
    return re.sub(r"_(.)", lambda m: m[1].upper(), snake)


def swift_type_of(full):
    pkg, name = full.rsplit(".", 1)
    return f"{namespace(pkg)}.{name}"


def operations(files, options):
    ops = []
    for pf in files:
        for si, service in enumerate(pf.services):
            for mi, method in enumerate(service.method):
                where = f"{pf.cited}: {service.name}.{method.name}"
                decl = method.options.Extensions[options.operation]
                access = options.Access.Name(decl.access)
                if access == "ACCESS_UNSPECIFIED":
                    raise ProtoError(where, "every rpc declares its access (identity.options.v1.operation.access)")
                op = Operation(service.name, method.name, pf.service_docs.get((6, si, 2, mi), []),
                               method.input_type.lstrip("."), method.output_type.lstrip("."), access,
                               limits=list(decl.limits), errors=list(decl.errors), audit=decl.audit,
                               session_checked_by_handler=decl.session_checked_by_handler,
                               only_adds_sessions=decl.only_adds_sessions, session_end=decl.session_end, where=where,
                               service_doc=pf.service_docs.get((6, si), []))
                if decl.HasField("http"):
                    op.method, op.path = decl.http.method, decl.http.path
                    op.status, op.body = decl.http.status or 200, decl.http.body
                    op.summary, op.description = decl.http.summary, decl.http.description
                    op.request, op.response = decl.http.request, decl.http.response
                    op.parameters = list(decl.http.parameters)
                    op.answer = decl.http.answer
                    if op.answer and op.response:
                        raise ProtoError(where, f"answer {op.answer!r} implies its response; leave `response` out")
                    if op.answer:
                        op.response = ANSWER_RESPONSES.get(op.answer) or ""
                    op.mfa_challenge = decl.http.mfa_challenge or op.answer == "signed_in"
                    for item in decl.http.path_fields:
                        name, eq, parameter = item.partition("=")
                        if not eq or "{" + parameter + "}" not in op.path:
                            raise ProtoError(where, f"path_fields {item!r} is not field=parameter of {op.path}")
                        op.path_fields[name] = parameter
                    for item in decl.http.fixed:
                        name, eq, value = item.partition("=")
                        if not eq:
                            raise ProtoError(where, f"fixed {item!r} is not field=value")
                        op.fixed[name] = value
                    if op.answer and op.answer not in ANSWERS:
                        raise ProtoError(where, f"answer {op.answer!r} is not one of {sorted(ANSWERS)}")
                    if not op.summary:
                        raise ProtoError(where, "an HTTP operation has a summary (the API document's)")
                    if op.method not in ("GET", "POST", "PATCH", "PUT", "DELETE") or not op.path.startswith("/"):
                        raise ProtoError(where, f"bad http method or path: {op.method} {op.path}")
                elif access not in ("INTERNAL", "CONSOLE_OWNER"):
                    raise ProtoError(where, "an rpc reached over HTTP declares `http`; bus-only rpcs are INTERNAL")
                if access == "CONSOLE_OWNER" and (decl.HasField("http") or not op.audit):
                    raise ProtoError(where, "a CONSOLE_OWNER command is bus only and names its audit action")
                if access == "SECRET_KEY" and op.path.startswith("/v1/admin/") and not op.audit:
                    raise ProtoError(where, "an admin operation names its audit action")
                if op.session_end and access != "BEARER":
                    raise ProtoError(where, "session_end is for BEARER operations")
                if op.session_checked_by_handler and access != "BEARER":
                    raise ProtoError(where, "session_checked_by_handler is for BEARER operations")
                if op.only_adds_sessions and (access != "APP_KEY" or op.input == "identity.gateway.v1.Served"):
                    # Any caller's token (a guest's upgrade, a bearer) names reads the command may change.
                    raise ProtoError(where, "only_adds_sessions is for APP_KEY operations that send a command")
                if access == "PUBLIC" and op.limits and "{app_id}" not in op.path:
                    # A limit counts against an app: a public route names its app in its path.
                    raise ProtoError(where, "a PUBLIC operation with limits names its app in its path ({app_id})")
                ops.append(op)
    seen = {}
    for op in ops:
        if op.path and seen.setdefault((op.method, op.path), op) is not op:
            raise ProtoError(op.where, f"{op.method} {op.path} is declared twice")
    return ops


def field_sources(files, options):
    """Full message name -> {source name: Field} for fields the gateway fills from the caller."""
    out = {}
    for pf in files:
        for msg in pf.messages:
            for f in msg.fields:
                source = options.Source.Name(f.options.Extensions[options.field].source)
                if source != "SOURCE_UNSPECIFIED":
                    out.setdefault(f"{pf.package}.{msg.name}", {})[source] = f
    return out


def error_expression(name, where):
    """One declared error (a code, or a named group of RouteErrors) as Swift."""
    if name.startswith("auth/"):
        member = camel(name[5:].replace("-", "_")).replace("Json", "JSON")
        return ERROR_CALLS.get(name, "." + member)
    m = re.fullmatch(r"([a-z_]+)(?:\(([a-z]+)\))?", name)
    if not m:
        raise ProtoError(where, f"unknown error declaration {name!r}")
    return "." + camel(m[1]) + (f'("{m[2]}")' if m[2] else "")


def errors_expression(names, where):
    """The declared errors as one Swift array: codes in literals, groups added."""
    parts, codes = [], []
    for name in names:
        if name.startswith("auth/"):
            codes.append(error_expression(name, where))
            continue
        if codes:
            parts.append("[" + ", ".join(codes) + "]")
            codes = []
        parts.append(error_expression(name, where))
    if codes:
        parts.append("[" + ", ".join(codes) + "]")
    expression = " + ".join(parts) or "[]"
    return f"[ServiceError]{expression}" if expression.startswith(".") else expression


def swift_string(text):
    """A Swift string literal (JSON's escapes are Swift's for these texts; `\\(` cannot occur)."""
    return json.dumps(text, ensure_ascii=False)


def swift_doc(lines, indent):
    return [f"{indent}///{' ' + line if line else ''}" for line in lines]


GENERATED_HEADER = (f"{MARKER} from proto/identity/gateway/v1/gateway.proto and the commands' field options."
                    " Do not edit: change the .proto files and run `make proto`.")
