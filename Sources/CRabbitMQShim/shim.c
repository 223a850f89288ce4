#include "CRabbitMQShim.h"
#include <string.h>

int crabbitmqshim_login(amqp_connection_state_t conn, const char *vhost, int heartbeat_seconds,
                        const char *user, const char *password, const char *connection_name) {
    amqp_table_entry_t entry;
    amqp_table_t properties = {0, &entry};
    if (connection_name != NULL && connection_name[0] != '\0') {
        entry.key = amqp_cstring_bytes("connection_name");
        entry.value.kind = AMQP_FIELD_KIND_UTF8;
        entry.value.value.bytes = amqp_cstring_bytes(connection_name);
        properties.num_entries = 1;
    }
    amqp_rpc_reply_t reply = amqp_login_with_properties(conn, vhost, 0, 131072, heartbeat_seconds, &properties,
                                                        AMQP_SASL_METHOD_PLAIN, user, password);
    if (reply.reply_type == AMQP_RESPONSE_NORMAL) return 0;
    if (reply.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION) return reply.library_error < 0 ? reply.library_error : -1;
    return 1;
}

static int set_bytes(amqp_bytes_t *field, const char *value) {
    if (value == NULL || value[0] == '\0') return 0;
    *field = amqp_cstring_bytes(value);
    return 1;
}

int crabbitmqshim_publish(amqp_connection_state_t conn, amqp_channel_t channel,
                          const char *exchange, const char *routing_key,
                          const crabbitmqshim_message *message, const void *body, size_t length) {
    amqp_basic_properties_t props;
    memset(&props, 0, sizeof(props));
    props._flags = AMQP_BASIC_CONTENT_TYPE_FLAG | AMQP_BASIC_DELIVERY_MODE_FLAG;
    props.content_type = amqp_cstring_bytes("application/json");
    props.delivery_mode = message->persistent ? 2 : 1;
    if (set_bytes(&props.type, message->type)) props._flags |= AMQP_BASIC_TYPE_FLAG;
    if (set_bytes(&props.correlation_id, message->correlation_id)) props._flags |= AMQP_BASIC_CORRELATION_ID_FLAG;
    if (set_bytes(&props.reply_to, message->reply_to)) props._flags |= AMQP_BASIC_REPLY_TO_FLAG;
    if (set_bytes(&props.message_id, message->message_id)) props._flags |= AMQP_BASIC_MESSAGE_ID_FLAG;
    if (set_bytes(&props.expiration, message->expiration)) props._flags |= AMQP_BASIC_EXPIRATION_FLAG;
    if (set_bytes(&props.user_id, message->user_id)) props._flags |= AMQP_BASIC_USER_ID_FLAG;

    amqp_table_entry_t entries[5];
    int count = 0;
    const char *names[5] = {"app_id", "request_id", "caller_token", "republished", "languages"};
    const char *values[5] = {message->app_id, message->request_id, message->caller_token,
                             message->republished ? "1" : NULL, message->languages};
    for (int i = 0; i < 5; i++) {
        if (values[i] == NULL || values[i][0] == '\0') continue;
        entries[count].key = amqp_cstring_bytes(names[i]);
        entries[count].value.kind = AMQP_FIELD_KIND_UTF8;
        entries[count].value.value.bytes = amqp_cstring_bytes(values[i]);
        count++;
    }
    if (count > 0) {
        props.headers.num_entries = count;
        props.headers.entries = entries;
        props._flags |= AMQP_BASIC_HEADERS_FLAG;
    }
    amqp_bytes_t payload = {length, (void *)body};
    return amqp_basic_publish(conn, channel, amqp_cstring_bytes(exchange), amqp_cstring_bytes(routing_key),
                              0, 0, &props, payload);
}

int crabbitmqshim_header(const amqp_basic_properties_t *properties, const char *name,
                         char *buffer, size_t size) {
    if (!(properties->_flags & AMQP_BASIC_HEADERS_FLAG)) return -1;
    size_t name_length = strlen(name);
    for (int i = 0; i < properties->headers.num_entries; i++) {
        const amqp_table_entry_t *entry = &properties->headers.entries[i];
        if (entry->key.len != name_length || memcmp(entry->key.bytes, name, name_length) != 0) continue;
        if (entry->value.kind != AMQP_FIELD_KIND_UTF8 && entry->value.kind != AMQP_FIELD_KIND_BYTES) return -1;
        size_t length = entry->value.value.bytes.len;
        if (length + 1 > size) length = size - 1;
        memcpy(buffer, entry->value.value.bytes.bytes, length);
        buffer[length] = '\0';
        return (int)length;
    }
    return -1;
}

int crabbitmqshim_last_rpc_ok(amqp_connection_state_t conn) {
    return amqp_get_rpc_reply(conn).reply_type == AMQP_RESPONSE_NORMAL ? 0 : -1;
}

int crabbitmqshim_declare_delay_queue(amqp_connection_state_t conn, amqp_channel_t channel,
                                      const char *name, const char *target) {
    return crabbitmqshim_declare_delay_queue_via(conn, channel, name, "", target);
}

int crabbitmqshim_declare_delay_queue_via(amqp_connection_state_t conn, amqp_channel_t channel,
                                          const char *name, const char *exchange, const char *target) {
    amqp_table_entry_t entries[2];
    entries[0].key = amqp_cstring_bytes("x-dead-letter-exchange");
    entries[0].value.kind = AMQP_FIELD_KIND_UTF8;
    entries[0].value.value.bytes = amqp_cstring_bytes(exchange);
    entries[1].key = amqp_cstring_bytes("x-dead-letter-routing-key");
    entries[1].value.kind = AMQP_FIELD_KIND_UTF8;
    entries[1].value.value.bytes = amqp_cstring_bytes(target);
    amqp_table_t arguments = {2, entries};
    amqp_queue_declare(conn, channel, amqp_cstring_bytes(name), 0, 1, 0, 0, arguments);
    return crabbitmqshim_last_rpc_ok(conn);
}

/* After a server exception on `channel` (a refused declare closes the channel), answer the
 * broker's channel.close so the channel number can be opened again; returns the reply code. */
static int server_refusal(amqp_connection_state_t conn, amqp_channel_t channel, amqp_rpc_reply_t reply) {
    if (reply.reply_type != AMQP_RESPONSE_SERVER_EXCEPTION) return -1;
    if (reply.reply.id == AMQP_CHANNEL_CLOSE_METHOD) {
        amqp_channel_close_t *close = (amqp_channel_close_t *)reply.reply.decoded;
        amqp_channel_close_ok_t close_ok;
        amqp_send_method(conn, channel, AMQP_CHANNEL_CLOSE_OK_METHOD, &close_ok);
        return close->reply_code;
    }
    if (reply.reply.id == AMQP_CONNECTION_CLOSE_METHOD) return -2;
    return -1;
}

int crabbitmqshim_declare_queue(amqp_connection_state_t conn, amqp_channel_t channel, const char *name,
                                int durable, const crabbitmqshim_queue_options *options) {
    amqp_table_entry_t entries[5];
    int count = 0;
    if (options->quorum) {
        entries[count].key = amqp_cstring_bytes("x-queue-type");
        entries[count].value.kind = AMQP_FIELD_KIND_UTF8;
        entries[count].value.value.bytes = amqp_cstring_bytes("quorum");
        count++;
    }
    if (options->dead_letter_exchange != NULL) {
        entries[count].key = amqp_cstring_bytes("x-dead-letter-exchange");
        entries[count].value.kind = AMQP_FIELD_KIND_UTF8;
        entries[count].value.value.bytes = amqp_cstring_bytes(options->dead_letter_exchange);
        count++;
        entries[count].key = amqp_cstring_bytes("x-dead-letter-routing-key");
        entries[count].value.kind = AMQP_FIELD_KIND_UTF8;
        entries[count].value.value.bytes = amqp_cstring_bytes(options->dead_letter_routing_key);
        count++;
        if (options->quorum) {
            /* A quorum queue dead-letters at most once unless told otherwise; a delay queue's
             * expired message must reach its target, so at-least-once (which needs
             * reject-publish overflow). */
            entries[count].key = amqp_cstring_bytes("x-dead-letter-strategy");
            entries[count].value.kind = AMQP_FIELD_KIND_UTF8;
            entries[count].value.value.bytes = amqp_cstring_bytes("at-least-once");
            count++;
            entries[count].key = amqp_cstring_bytes("x-overflow");
            entries[count].value.kind = AMQP_FIELD_KIND_UTF8;
            entries[count].value.value.bytes = amqp_cstring_bytes("reject-publish");
            count++;
        }
    }
    amqp_table_t arguments = {count, entries};
    amqp_queue_declare(conn, channel, amqp_cstring_bytes(name), options->passive, durable, 0, 0,
                       count > 0 ? arguments : amqp_empty_table);
    amqp_rpc_reply_t reply = amqp_get_rpc_reply(conn);
    if (reply.reply_type == AMQP_RESPONSE_NORMAL) return 0;
    return server_refusal(conn, channel, reply);
}

int crabbitmqshim_delete_queue_if_idle(amqp_connection_state_t conn, amqp_channel_t channel, const char *name) {
    amqp_queue_delete(conn, channel, amqp_cstring_bytes(name), 1, 1);
    amqp_rpc_reply_t reply = amqp_get_rpc_reply(conn);
    if (reply.reply_type == AMQP_RESPONSE_NORMAL) return 0;
    return server_refusal(conn, channel, reply);
}

long long crabbitmqshim_header_int(const amqp_basic_properties_t *properties, const char *name) {
    if (!(properties->_flags & AMQP_BASIC_HEADERS_FLAG)) return -1;
    size_t name_length = strlen(name);
    for (int i = 0; i < properties->headers.num_entries; i++) {
        const amqp_table_entry_t *entry = &properties->headers.entries[i];
        if (entry->key.len != name_length || memcmp(entry->key.bytes, name, name_length) != 0) continue;
        switch (entry->value.kind) {
        case AMQP_FIELD_KIND_I8: return entry->value.value.i8;
        case AMQP_FIELD_KIND_U8: return entry->value.value.u8;
        case AMQP_FIELD_KIND_I16: return entry->value.value.i16;
        case AMQP_FIELD_KIND_U16: return entry->value.value.u16;
        case AMQP_FIELD_KIND_I32: return entry->value.value.i32;
        case AMQP_FIELD_KIND_U32: return entry->value.value.u32;
        case AMQP_FIELD_KIND_I64: return entry->value.value.i64;
        case AMQP_FIELD_KIND_U64: return (long long)entry->value.value.u64;
        default: return -1;
        }
    }
    return -1;
}

int crabbitmqshim_confirm_frame(const amqp_frame_t *frame, uint64_t *delivery_tag, int *multiple) {
    if (frame->frame_type != AMQP_FRAME_METHOD) return 0;
    if (frame->payload.method.id == AMQP_BASIC_ACK_METHOD) {
        amqp_basic_ack_t *ack = (amqp_basic_ack_t *)frame->payload.method.decoded;
        *delivery_tag = ack->delivery_tag;
        *multiple = ack->multiple;
        return 1;
    }
    if (frame->payload.method.id == AMQP_BASIC_NACK_METHOD) {
        amqp_basic_nack_t *nack = (amqp_basic_nack_t *)frame->payload.method.decoded;
        *delivery_tag = nack->delivery_tag;
        *multiple = nack->multiple;
        return 2;
    }
    return 0;
}
