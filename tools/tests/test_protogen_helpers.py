"""Unit tests of tools/protogen.py's pure helpers and of the rules it enforces.

The naming rules every emitter shares (package -> Swift namespace, field -> JSON and Swift name),
the Swift spellings of declared errors, the checks operations() makes of each rpc's `operation`
option (path parameters, fixed fields, access rules), the emitters' own refusals, and the
generator's promise that a proto feature it does not support stops it with an error rather than
being dropped: each file of tools/tests/fixtures/unsupported/ is one such feature, parsed as the
only file of a scratch tree (at identity/bad/v1/), and must fail with the error named in
UNSUPPORTED (after the scratch tree's own path).

The rules are tested on the reference fixture (tools/tests/fixtures/proto/, see
test_protogen_references.py) with one declaration changed in a copy.

    python3 -m pytest -q tools/tests/test_protogen_helpers.py
"""
import copy
import shutil
import sys
import tempfile
import unittest
from pathlib import Path

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS.parent))  # tools/: protogen and the package declared/

from declared.bodies import body_schema  # noqa: E402
from declared.descriptors import (PROTO_DIR, ProtoError, cited, json_name, load_descriptors, namespace,  # noqa: E402
                                  parse_all, resolve, swift_ident)
from declared.gateway import render_gateway  # noqa: E402
from declared.operations import (camel, error_expression, errors_expression, field_sources, lower_camel,  # noqa: E402
                                 operations, swift_doc, swift_string, swift_type_of)
from declared.shapes import is_shape  # noqa: E402
from declared.workers import render_token_worker, render_worker  # noqa: E402

FIXTURE = TESTS / "fixtures" / "proto"
UNSUPPORTED_DIR = TESTS / "fixtures" / "unsupported"

# tools/tests/fixtures/unsupported/<file> -> the error it must stop the generator with.
UNSUPPORTED = {
    "oneof.proto": "identity/bad/v1/oneof.proto: message Choice.email: error: oneof is not supported",
    "map.proto": "identity/bad/v1/map.proto: message Labels: error: nested messages and enums are not supported",
    "enum.proto": "identity/bad/v1/enum.proto: error: enum Plan: enums are not supported in messages that travel",
    "nested.proto": "identity/bad/v1/nested.proto: message Outer: error: nested messages and enums are not supported",
    "float.proto": "identity/bad/v1/float.proto: message Reading.celsius: error: field type float is not supported",
    "proto2.proto": 'identity/bad/v1/proto2.proto: error: the file must start with syntax = "proto3";',
    "unversioned.proto": ("identity/bad/v1/unversioned.proto: error: the last package component must be a"
                          " version such as v1"),
    "swift_name.proto": "identity/bad/v1/swift_name.proto: message Data: error: message name Data clashes with a Swift name",
    "well_known.proto": ("identity/bad/v1/well_known.proto: message Event.at: error: unknown type"
                         " google.protobuf.Timestamp (other packages need the full name)"),
    # proto3 itself forbids this one: protoc's refusal is the generator's error.
    "json_clash.proto": 'protoc: error: identity/bad/v1/json_clash.proto:8:10: The JSON camel-case name of field "firstName"',
}


class NameTests(unittest.TestCase):
    def test_namespace_is_the_package_name_and_version(self):
        self.assertEqual(namespace("identity.common.v1"), "CommonV1")
        self.assertEqual(namespace("identity.auth_hooks.v1"), "AuthHooksV1")
        self.assertEqual(namespace("identity.token.v2beta1"), "TokenV2beta1")

    def test_json_name_drops_underscores_and_capitalises_what_follows(self):
        cases = {"first_name": "firstName", "uid": "uid", "user_id_2": "userId2", "x_2fa": "x2fa",
                 "double__underscore": "doubleUnderscore", "trailing_": "trailing", "mixedCase_name": "mixedCaseName"}
        for name, expected in cases.items():
            self.assertEqual(json_name(name), expected, name)

    def test_json_name_is_protocs_for_every_fixture_field(self):
        descriptors, _ = load_descriptors(FIXTURE)
        fields = [(m.name, f) for fd in descriptors.file for m in fd.message_type for f in m.field]
        self.assertGreater(len(fields), 50)
        for message, f in fields:
            self.assertEqual(json_name(f.name), f.json_name, f"{message}.{f.name}")

    def test_swift_ident_escapes_keywords_only(self):
        self.assertEqual(swift_ident("default"), "`default`")
        self.assertEqual(swift_ident("Self"), "`Self`")
        self.assertEqual(swift_ident("defaults"), "defaults")
        self.assertEqual(swift_ident("photoUrl"), "photoUrl")

    def test_a_proto_file_is_cited_by_its_path_in_the_repository(self):
        self.assertEqual(cited(PROTO_DIR, "identity/token/v1/token.proto"), "proto/identity/token/v1/token.proto")
        self.assertEqual(cited(FIXTURE, "identity/fixture/v1/kinds.proto"),
                         "tools/tests/fixtures/proto/identity/fixture/v1/kinds.proto")
        self.assertEqual(cited("/elsewhere", "identity/x/v1/x.proto"), "/elsewhere/identity/x/v1/x.proto")

    def test_operation_names(self):
        self.assertEqual(lower_camel("SignUp"), "signUp")
        self.assertEqual(camel("password_sign_in"), "passwordSignIn")
        self.assertEqual(swift_type_of("identity.token.v1.SignUp"), "TokenV1.SignUp")
        self.assertEqual(swift_type_of("identity.auth_hooks.v1.Hook"), "AuthHooksV1.Hook")

    def test_swift_string_and_doc(self):
        self.assertEqual(swift_string('say "hi"\n\\ é'), '"say \\"hi\\"\\n\\\\ é"')
        self.assertEqual(swift_doc(["One.", "", "Two."], "    "), ["    /// One.", "    ///", "    /// Two."])


class ErrorDeclarationTests(unittest.TestCase):
    def test_a_code_is_its_service_error(self):
        self.assertEqual(error_expression("auth/user-not-found", "here"), ".userNotFound")
        self.assertEqual(error_expression("auth/invalid-json", "here"), ".invalidJSON")
        self.assertEqual(error_expression("auth/rate-limited", "here"), ".rateLimited(retryAfter: 1)")
        self.assertEqual(error_expression("auth/weak-password", "here"), '.weakPassword("")')

    def test_a_group_and_a_group_with_an_argument(self):
        self.assertEqual(error_expression("signed_in", "here"), ".signedIn")
        self.assertEqual(error_expression("code_check(sms)", "here"), '.codeCheck("sms")')

    def test_an_unknown_declaration_is_an_error(self):
        for bad in ("Signed-In", "code_check(", "code_check(SMS)", ""):
            with self.assertRaises(ProtoError, msg=bad) as caught:
                error_expression(bad, "x.proto: S.R")
            self.assertIn("x.proto: S.R: error: unknown error declaration", str(caught.exception))

    def test_codes_are_grouped_into_literals_between_groups(self):
        self.assertEqual(errors_expression([], "here"), "[]")
        self.assertEqual(errors_expression(["signed_in"], "here"), "[ServiceError].signedIn")
        self.assertEqual(errors_expression(["auth/not-found"], "here"), "[.notFound]")
        self.assertEqual(errors_expression(["auth/a", "auth/b", "signed_in", "auth/c"], "here"),
                         "[.a, .b] + .signedIn + [.c]")
        self.assertEqual(errors_expression(["signed_in", "code_check"], "here"),
                         "[ServiceError].signedIn + .codeCheck")


def fixture():
    files, options = parse_all(FIXTURE)
    resolve(files)
    return files, options


def render_all(files, options, ops=None):
    """What protogen.generate renders from parsed files, but the message files (so a test may
    change the parsed declarations first)."""
    ops = operations(files, options) if ops is None else ops
    sources = field_sources(files, options)
    shapes = [m for pf in files if any(is_shape(m, options) for m in pf.messages) for m in pf.messages]
    messages = {f"{pf.package}.{m.name}": m for pf in files for m in pf.messages}
    render_token_worker(ops, sources)
    for worker in ("revocation", "provider", "mailer"):
        render_worker(ops, sources, worker)
    return render_gateway(ops, messages, options, sources, shapes)


class OperationRuleTests(unittest.TestCase):
    """operations() reads each rpc's declaration and refuses what it cannot mean."""

    @classmethod
    def setUpClass(cls):
        cls.files, cls.options = fixture()

    def changed(self, rpc, change):
        """A copy of the fixture in which change(declaration) has edited rpc's `operation`."""
        files = copy.deepcopy(self.files)
        found = [m for pf in files for s in pf.services for m in s.method if m.name == rpc]
        self.assertEqual(len(found), 1, rpc)
        change(found[0].options.Extensions[self.options.operation])
        return files

    def where(self, rpc):
        service = next(s.name for pf in self.files for s in pf.services for m in s.method if m.name == rpc)
        return f"tools/tests/fixtures/proto/identity/gateway/v1/fixture_gateway.proto: {service}.{rpc}: error: "

    def refused(self, rpc, change, message, at=None):
        """operations() refuses the changed declaration of rpc (the error names the rpc `at`)."""
        with self.assertRaises(ProtoError) as caught:
            operations(self.changed(rpc, change), self.options)
        self.assertIn(self.where(at or rpc) + message, str(caught.exception))

    def op(self, name):
        return next(op for op in operations(self.files, self.options) if op.name == name)

    def test_the_fixture_is_read_as_declared(self):
        update = self.op("UpdateNote")
        self.assertEqual((update.method, update.path, update.status, update.access, update.answer),
                         ("PATCH", "/v1/me/notes/{id}", 204, "BEARER", "done"))
        self.assertEqual(update.path_fields, {"note_id": "id"})
        self.assertEqual(self.op("EndSessions").fixed, {"reason": "sign_out"})
        register = self.op("Register")
        self.assertEqual((register.response, register.mfa_challenge), ("SignedIn", True))  # implied by the answer
        self.assertEqual(self.op("Status").status, 200)  # the default
        self.assertEqual(self.op("RefreshKeys").path, "")  # bus only

    def test_a_path_field_names_a_parameter_of_the_path(self):
        self.refused("UpdateNote", lambda d: d.http.path_fields.__setitem__(0, "note_id=note_id"),
                     "path_fields 'note_id=note_id' is not field=parameter of /v1/me/notes/{id}")
        self.refused("UpdateNote", lambda d: d.http.path_fields.__setitem__(0, "note_id"),
                     "path_fields 'note_id' is not field=parameter")

    def test_a_path_parameter_is_a_whole_segment_name(self):
        # `{id}` must appear as written: a prefix of a parameter's name is no parameter.
        self.refused("UpdateNote", lambda d: d.http.path_fields.__setitem__(0, "note_id=i"),
                     "path_fields 'note_id=i' is not field=parameter of /v1/me/notes/{id}")

    def test_a_fixed_field_is_field_equals_value(self):
        self.refused("EndSessions", lambda d: d.http.fixed.__setitem__(0, "reason"),
                     "fixed 'reason' is not field=value")

    def test_a_fixed_or_path_field_names_a_field_of_the_command(self):
        files = self.changed("EndSessions", lambda d: d.http.fixed.__setitem__(0, "motive=sign_out"))
        with self.assertRaises(ProtoError) as caught:
            render_all(files, self.options)
        self.assertIn("fixed names no field of identity.revocation.v1.EndSessions: ['motive']", str(caught.exception))

    def test_method_and_path(self):
        self.refused("ListNotes", lambda d: setattr(d.http, "method", "FETCH"), "bad http method or path: FETCH")
        self.refused("ListNotes", lambda d: setattr(d.http, "path", "v1/me/notes"), "bad http method or path")

    def test_a_route_is_declared_once(self):
        self.refused("ListNotes", lambda d: setattr(d.http, "path", "/v1/me/sessions") or setattr(d.http, "method", "DELETE"),
                     "DELETE /v1/me/sessions is declared twice", at="EndSessions")

    def test_access_is_mandatory(self):
        self.refused("ListNotes", lambda d: setattr(d, "access", 0), "every rpc declares its access")

    def test_an_http_operation_has_a_summary(self):
        self.refused("ListNotes", lambda d: d.http.ClearField("summary"), "an HTTP operation has a summary")

    def test_answers(self):
        self.refused("UpdateNote", lambda d: setattr(d.http, "answer", "everything"), "answer 'everything' is not one of")
        self.refused("UpdateNote", lambda d: setattr(d.http, "response", "Note"),
                     "answer 'done' implies its response; leave `response` out")

    def test_only_internal_and_console_rpcs_are_bus_only(self):
        self.refused("ListNotes", lambda d: d.ClearField("http"), "an rpc reached over HTTP declares `http`")

    def test_access_rules(self):
        console = self.options.Access.Value("CONSOLE_OWNER")
        public = self.options.Access.Value("PUBLIC")
        self.refused("InviteMember", lambda d: d.ClearField("audit"), "a CONSOLE_OWNER command is bus only and names its audit action")
        self.refused("UpdateNote", lambda d: setattr(d, "access", console) or setattr(d, "audit", "x"),
                     "a CONSOLE_OWNER command is bus only")
        self.refused("SetQuota", lambda d: d.ClearField("audit"), "an admin operation names its audit action")
        operations(self.changed("UpdateNote", lambda d: setattr(d, "session_checked_by_handler", True)), self.options)
        self.refused("AddRecoveryEmail", lambda d: setattr(d, "session_checked_by_handler", True),
                     "session_checked_by_handler is for BEARER operations")
        self.refused("Register", lambda d: setattr(d, "only_adds_sessions", True),
                     "only_adds_sessions is for APP_KEY operations that send a command")
        self.refused("RemoveRecoveryEmail", lambda d: setattr(d, "access", public) or d.limits.append("per_ip"),
                     "a PUBLIC operation with limits names its app in its path ({app_id})")

    def test_emitters_refuse_what_they_cannot_render(self):
        ops = operations(self.files, self.options)
        cases = [("UpdateNote", "output", "identity.token.v1.Accepted", "answer 'done' renders identity.token.v1.Done, not"),
                 ("ListNotes", "response", "Nobody", "response 'Nobody' is no shape's (answers.proto)"),
                 ("SetQuota", "request", "NotePatch", "NotePatch is a body message: the handler turns it into the command by hand")]
        for name, attribute, value, message in cases:
            changed = [copy.copy(op) for op in ops]
            setattr(next(op for op in changed if op.name == name), attribute, value)
            with self.assertRaises(ProtoError, msg=name) as caught:
                render_all(self.files, self.options, changed)
            self.assertIn(message, str(caught.exception))


class FieldRuleTests(unittest.TestCase):
    """A body field's rules: what the body reader and the document's schema both follow."""

    @classmethod
    def setUpClass(cls):
        cls.files, cls.options = fixture()

    def with_rule(self, message, field, change):
        files = copy.deepcopy(self.files)
        msg = next(m for pf in files for m in pf.messages if m.name == message)
        change(next(f for f in msg.fields if f.name == field).options.Extensions[self.options.field])
        return files, msg

    def test_a_body_schema_follows_the_rules(self):
        msg = next(m for pf in self.files for m in pf.messages if m.name == "UpdateNote")
        schema = body_schema(msg, self.options, {"note_id": "id"})
        self.assertEqual(schema["required"], ["title", "kind", "settings_json"])  # not pages: it has a default
        self.assertNotIn("note_id", schema["properties"])  # the path's, not the body's
        self.assertNotIn("uid", schema["properties"])  # the caller's
        self.assertEqual(schema["properties"]["kind"], {"type": "string", "enum": ["text", "list"], "examples": ["list"]})
        self.assertEqual(schema["properties"]["priority"]["type"], ["integer", "null"])

    def test_an_unknown_format_is_refused(self):
        files, msg = self.with_rule("UpdateNote", "title", lambda rules: setattr(rules, "format", "colour"))
        with self.assertRaises(ProtoError) as caught:
            body_schema(msg, self.options)
        self.assertIn("UpdateNote.title: error: format 'colour' is not one the body reader checks", str(caught.exception))

    def test_an_int32_body_field_declares_its_bounds(self):
        files, msg = self.with_rule("UpdateNote", "pages", lambda rules: rules.ClearField("maximum"))
        with self.assertRaises(ProtoError) as caught:
            body_schema(msg, self.options)
        self.assertIn("an int32 body field declares its minimum and maximum", str(caught.exception))

    def test_a_worker_that_checks_no_callers_takes_no_caller_field(self):
        source = self.options.Source.Value("CALLER_UID")
        files, _ = self.with_rule("RefreshKeys", "provider", lambda rules: setattr(rules, "source", source))
        with self.assertRaises(ProtoError) as caught:
            render_worker(operations(files, self.options), field_sources(files, self.options), "provider")
        self.assertIn("acts for a user, but the provider worker checks no callers", str(caught.exception))

    def test_a_signed_in_callers_command_names_its_caller(self):
        files, _ = self.with_rule("AddRecoveryEmail", "uid", lambda rules: rules.ClearField("source"))
        with self.assertRaises(ProtoError) as caught:
            render_token_worker(operations(files, self.options), field_sources(files, self.options))
        self.assertIn("identity.token.v1.AddRecoveryEmail is sent for a signed-in caller but names no CALLER_UID field",
                      str(caught.exception))


class UnsupportedFeatureTests(unittest.TestCase):
    """"Anything else stops with an error, so nothing is silently dropped" (tools/protogen.py)."""

    def test_every_fixture_has_its_expected_error(self):
        self.assertEqual(sorted(p.name for p in UNSUPPORTED_DIR.glob("*.proto")), sorted(UNSUPPORTED))

    def test_each_unsupported_feature_stops_the_generator(self):
        for name, expected in sorted(UNSUPPORTED.items()):
            with self.subTest(name), tempfile.TemporaryDirectory() as tree:
                folder = Path(tree, "identity", "bad", "v1")
                folder.mkdir(parents=True)
                shutil.copy(UNSUPPORTED_DIR / name, folder / name)
                with self.assertRaises(ProtoError) as caught:
                    files, _ = parse_all(tree)
                    resolve(files)
                self.assertIn(expected, str(caught.exception))


if __name__ == "__main__":
    unittest.main()
