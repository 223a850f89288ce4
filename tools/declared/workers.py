"""The workers' side of the commands: for each worker, the handler protocol its router conforms
to, the dispatch table that decodes a command by its AMQP `type`, and the caller checks the
command declares (who it acts for, the fresh proof it needs), so no command reaches its handler
without them.
"""
import json

from .descriptors import ProtoError, json_name
from .operations import FRESH_RULE, GENERATED_HEADER, WORKER_OF_PACKAGE, swift_type_of


def render_token_worker(ops, sources):
    """The token worker's handler protocol, dispatch table and per-command access."""
    commands = {}  # full name -> [ops], in declaration order
    for op in ops:
        if WORKER_OF_PACKAGE.get(op.input.rsplit(".", 1)[0]) == "token":
            commands.setdefault(op.input, []).append(op)
    i1, i2, i3, i4 = " " * 4, " " * 8, " " * 12, " " * 16
    out = [GENERATED_HEADER, "", "import IdentityKit", "",
           "/// The commands the token worker consumes (`identity.token.commands`), one handler each. The",
           "/// router conforms (`CommandRouter+Handlers.swift`, or a flow's own file); a command declared in proto/ without a",
           "/// handler does not compile.",
           "protocol TokenCommandHandlers: Sendable {"]
    for full, users in commands.items():
        routes = ", ".join(f"{op.method} {op.path}" if op.path else f"{op.service}.{op.name} (bus only)" for op in users)
        out += [f"{i1}/// {routes}", f"{i1}func handle(_ command: {swift_type_of(full)}, _ context: CommandContext) throws -> CommandConsumer.Reply"]
    out += ["}", "",
            "/// Each command type's decoding, caller checks and handler: `CommandRouter.handle` looks the",
            "/// message's AMQP `type` up here, so no command runs without its declared checks.",
            "enum TokenCommandDispatch {",
            f"{i1}typealias Entry = @Sendable (any TokenCommandHandlers, CommandRouter.Checks, BusMessage) throws -> CommandConsumer.Reply",
            "",
            f"{i1}static let table: [String: Entry] = ["]
    for full in commands:
        t = swift_type_of(full)
        out += [f"{i2}{t}.protoName: {{ handlers, checks, message in",
                f"{i3}let command: {t} = try checks.decode(message)",
                f"{i3}return try handlers.handle(command, CommandContext(message))",
                f"{i2}}},"]
    out += [f"{i1}]", "}", ""]
    # Access: who the command acts for, and the fresh proof it needs.
    for full, users in commands.items():
        t, accesses = swift_type_of(full), {op.access for op in users}
        src = sources.get(full, {})
        if "CONSOLE_OWNER" in accesses:
            if accesses != {"CONSOLE_OWNER"} or len(users) != 1:
                raise ProtoError(users[0].where, "a console owner's command is sent by one console rpc only")
            out += [f"extension {t}: ActsForConsoleOwner {{",
                    f"{i1}static let auditAction = {json.dumps(users[0].audit)}", "}"]
            continue
        if "SECRET_KEY" in accesses:
            if accesses != {"SECRET_KEY"}:
                raise ProtoError(users[0].where, "a command of the admin API is sent by admin routes only")
            out += [f"extension {t}: ActsForAppBackend {{}}"]
            continue
        bearer = [a for a in accesses if a.startswith("BEARER") or a == "INTERNAL"]
        uid = src.get("CALLER_UID") or src.get("GUEST_UID")
        if bearer and "CALLER_UID" not in src and not (accesses <= {"INTERNAL"}):
            raise ProtoError(users[0].where, f"{full} is sent for a signed-in caller but names no CALLER_UID field")
        if not uid:
            continue
        session = src.get("CALLER_SESSION")
        value = lambda f: f"{json_name(f.name)}" + (' ?? ""' if f.label == "optional" else "")
        rules = {FRESH_RULE[a] for a in accesses if a in FRESH_RULE}
        if len(rules) > 1:
            raise ProtoError(users[0].where, f"{full}: routes that share a command share its fresh-proof rule")
        proto = "ChangesWayIn" if rules else "ActsForUser"
        lines = [f"extension {t}: {proto} {{", f"{i1}var actingUid: String {{ {value(uid)} }}"]
        if session:
            lines.append(f"{i1}var actingSessionId: String {{ {value(session)} }}")
        if rules:
            rule = next(iter(rules)).replace("command.", "")
            # A command some routes send for a signed-in caller and others for anyone (a phone
            # code for sign-in or for linking) needs the proof only when it names a caller.
            if uid.label == "optional":
                rule = f"{json_name(uid.name)} == nil ? nil : {rule}"
            lines.append(f"{i1}var freshProof: FreshProofRule? {{ {rule} }}")
        out += lines + ["}"]
    return "\n".join(out) + "\n"


# The workers whose dispatch is rendered by `render_worker`: worker -> (type prefix, queue, whether
# a command acting for a user is checked against the message's caller, what the handlers get).
WORKERS = {
    "revocation": ("Revocation", "`identity.revocation.commands`", True, "_ message: BusMessage"),
    "provider": ("Provider", "`identity.provider.commands`", False, "_ message: BusMessage"),
    "mailer": ("Mailer", "each delivery channel's queue", False, "_ message: BusMessage"),
}


def render_worker(ops, sources, worker):
    """A worker's handler protocol and dispatch table. Where the worker checks callers, a
    command that names the user it acts for (`source: CALLER_UID`) runs only with that user's
    access token or a live secret key of its app in the message (`CallerAuthority.check`)."""
    prefix, queue, checks_callers, context = WORKERS[worker]
    commands = {}
    for op in ops:
        if WORKER_OF_PACKAGE.get(op.input.rsplit(".", 1)[0]) == worker:
            commands.setdefault(op.input, []).append(op)
    i1, i2, i3 = " " * 4, " " * 8, " " * 12
    out = [GENERATED_HEADER, "", "import IdentityKit", "",
           f"/// The commands the {worker} worker consumes ({queue}), one handler each.",
           f"protocol {prefix}CommandHandlers: Sendable {{"]
    for full, users in commands.items():
        routes = ", ".join(f"{op.method} {op.path}" if op.path else f"{op.service}.{op.name} (bus only)" for op in users)
        out += [f"{i1}/// {routes}",
                f"{i1}func handle(_ command: {swift_type_of(full)}, {context}) throws -> CommandConsumer.Reply"]
    entry_args = "handlers, authority, message" if checks_callers else "handlers, message"
    entry_type = (f"(any {prefix}CommandHandlers, CallerAuthority, BusMessage)" if checks_callers
                  else f"(any {prefix}CommandHandlers, BusMessage)")
    out += ["}", "", "/// Each command type's decoding" + (", caller check" if checks_callers else "")
            + " and handler, by the message's AMQP `type`" + (": no command runs without its check." if checks_callers else "."),
            f"enum {prefix}CommandDispatch {{",
            f"{i1}typealias Entry = @Sendable {entry_type} throws -> CommandConsumer.Reply",
            "", f"{i1}static let table: [String: Entry] = ["]
    for full, users in commands.items():
        t = swift_type_of(full)
        uid = sources.get(full, {}).get("CALLER_UID")
        if checks_callers and any(op.access != "INTERNAL" for op in users) and not uid:
            raise ProtoError(users[0].where, f"{full} is sent for a caller but names no CALLER_UID field")
        if not checks_callers and uid:
            raise ProtoError(users[0].where, f"{full} acts for a user, but the {worker} worker checks no callers")
        out += [f"{i2}{t}.protoName: {{ {entry_args} in",
                f"{i3}let command = try ProtoJSON.decode({t}.self, from: message.body)"]
        if uid:
            # A command the admin API also sends (a SECRET_KEY route) may come from a console
            # owner or admin of the app, as the console's Users page sends it; no other may.
            console = ", consoleAdmins: true" if any(op.access == "SECRET_KEY" for op in users) else ""
            # Ending another session (or all) may take a fresh sign-in (`session_end`): the
            # command says which session it ends (`SessionEnding`), the app whether it asks.
            ending = ", ending: command.ending" if any(op.session_end for op in users) else ""
            out += [f"{i3}try authority.check(message, appId: command.appId, uid: command.{json_name(uid.name)}{console}{ending})"]
        out += [f"{i3}return try handlers.handle(command, message)", f"{i2}}},"]
    out += [f"{i1}]", "}"]
    return "\n".join(out) + "\n"
