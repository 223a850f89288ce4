// What Swift cannot do comfortably with rabbitmq-c: amqp_login is variadic, and message
// properties are C unions and tables. Functions return rabbitmq-c status codes (0 = ok).
#ifndef CRABBITMQ_SHIM_H
#define CRABBITMQ_SHIM_H

#include <stddef.h>
#include <amqp.h>
#include <amqp_framing.h>

/// Logs in with SASL PLAIN, asking for heartbeats every `heartbeat_seconds` (the broker may
/// lower it) and naming the connection `connection_name` (client property `connection_name`,
/// shown by `rabbitmqctl list_connections client_properties`; NULL or empty: unnamed).
/// Returns 0 or a negative AMQP status / 1 for a server refusal.
int crabbitmqshim_login(amqp_connection_state_t conn, const char *vhost, int heartbeat_seconds,
                        const char *user, const char *password, const char *connection_name);

/// The properties this service sets on a message (docs/architecture.md, "Processes": messages).
/// NULL or empty strings are left out. `app_id`, `request_id`, `caller_token` and `languages`
/// travel as headers.
typedef struct {
    const char *type;
    const char *correlation_id;
    const char *reply_to;
    const char *message_id;
    const char *expiration;
    const char *app_id;
    const char *request_id;
    const char *caller_token;
    /// The request's languages, best first, comma-separated (its Accept-Language, checked).
    const char *languages;
    int persistent;
    /// Sent again after a lost connection (header `republished` = "1"): the receiver treats it
    /// as a redelivery (it may have run already) when `user_id` is a publisher it trusts.
    int republished;
    /// The publishing connection's broker user (property `user_id`): RabbitMQ refuses a message
    /// whose user_id is not the connection's own, so the receiver learns who published it from
    /// the broker's word. NULL or empty: not set.
    const char *user_id;
} crabbitmqshim_message;

int crabbitmqshim_publish(amqp_connection_state_t conn, amqp_channel_t channel,
                          const char *exchange, const char *routing_key,
                          const crabbitmqshim_message *message, const void *body, size_t length);

/// Copies a string header of `properties` into `buffer` (NUL-terminated); returns its length,
/// or -1 when absent.
int crabbitmqshim_header(const amqp_basic_properties_t *properties, const char *name,
                         char *buffer, size_t size);

/// Declares a durable queue with x-dead-letter-exchange "" and x-dead-letter-routing-key
/// `target`; returns 0 on success.
int crabbitmqshim_declare_delay_queue(amqp_connection_state_t conn, amqp_channel_t channel,
                                      const char *name, const char *target);

/// The same with x-dead-letter-exchange `exchange` (a named exchange that routes `target`).
int crabbitmqshim_declare_delay_queue_via(amqp_connection_state_t conn, amqp_channel_t channel,
                                          const char *name, const char *exchange, const char *target);

/// 0 when the last synchronous call (declare, qos, consume) succeeded.
int crabbitmqshim_last_rpc_ok(amqp_connection_state_t conn);


/// How `crabbitmqshim_declare_queue` declares a queue (Bus/QueueDeclaration.swift decides).
typedef struct {
    /// x-queue-type quorum (else the broker's default, classic).
    int quorum;
    /// queue.declare passive: only checks that the queue exists.
    int passive;
    /// NULL: no dead-lettering arguments; else x-dead-letter-exchange (may be "") and
    /// x-dead-letter-routing-key, and for a quorum queue at-least-once dead-lettering.
    const char *dead_letter_exchange;
    const char *dead_letter_routing_key;
} crabbitmqshim_queue_options;

/// Declares queue `name`. 0 on success; else the broker's reply code (406 PRECONDITION_FAILED
/// when the queue exists with other arguments, 404 for a passive declare of a missing queue,
/// 403), with the channel's close answered so it can be opened again; -2 when the broker
/// closed the connection, -1 for any other failure.
int crabbitmqshim_declare_queue(amqp_connection_state_t conn, amqp_channel_t channel, const char *name,
                                int durable, const crabbitmqshim_queue_options *options);

/// queue.delete if-unused if-empty: 0 when deleted, else as `crabbitmqshim_declare_queue`.
int crabbitmqshim_delete_queue_if_idle(amqp_connection_state_t conn, amqp_channel_t channel, const char *name);

/// An integer header of `properties` (x-delivery-count), or -1 when absent or not an integer.
long long crabbitmqshim_header_int(const amqp_basic_properties_t *properties, const char *name);

/// For a publisher confirm frame: 1 (basic.ack) or 2 (basic.nack) with its delivery tag and
/// multiple flag; 0 for any other frame.
int crabbitmqshim_confirm_frame(const amqp_frame_t *frame, uint64_t *delivery_tag, int *multiple);

#endif
