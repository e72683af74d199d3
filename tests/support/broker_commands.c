/* What a broker writes to a producer, framed: see broker_commands.h. */
#include "broker_commands.h"

#include <string.h>

#include "wire/frame.h"

/* cmd, holding one body, as a frame. */
static int frame(pc_buf_t *out, Pulsar__Proto__BaseCommand *cmd,
                 Pulsar__Proto__BaseCommand__Type type)
{
    cmd->type = type;
    return pc_frame_encode_command(out, cmd);
}

void bc_version_bytes(int64_t version, uint8_t out[BC_VERSION_LEN])
{
    for (int i = 0; i < BC_VERSION_LEN; i++)
        out[i] = (uint8_t)((uint64_t)version >> (56 - 8 * i));
}

/* ---- the connection ---------------------------------------------------------------- */

int bc_connected(pc_buf_t *out, const char *server_version, int32_t protocol_version,
                 int32_t max_message_size)
{
    Pulsar__Proto__CommandConnected m = PULSAR__PROTO__COMMAND_CONNECTED__INIT;
    m.server_version = (char *)server_version;
    m.has_protocol_version = 1;
    m.protocol_version = protocol_version;
    m.has_max_message_size = 1;
    m.max_message_size = max_message_size;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.connected = &m;
    return frame(out, &cmd, PULSAR__PROTO__BASE_COMMAND__TYPE__CONNECTED);
}

int bc_ping(pc_buf_t *out)
{
    Pulsar__Proto__CommandPing m = PULSAR__PROTO__COMMAND_PING__INIT;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.ping = &m;
    return frame(out, &cmd, PULSAR__PROTO__BASE_COMMAND__TYPE__PING);
}

int bc_pong(pc_buf_t *out)
{
    Pulsar__Proto__CommandPong m = PULSAR__PROTO__COMMAND_PONG__INIT;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.pong = &m;
    return frame(out, &cmd, PULSAR__PROTO__BASE_COMMAND__TYPE__PONG);
}

int bc_auth_challenge(pc_buf_t *out, const char *server_version, const char *data)
{
    return bc_auth_challenge_bytes(out, server_version, "token", (const uint8_t *)data,
                                   strlen(data));
}

int bc_auth_challenge_bytes(pc_buf_t *out, const char *server_version, const char *method,
                            const uint8_t *data, size_t len)
{
    Pulsar__Proto__AuthData ad = PULSAR__PROTO__AUTH_DATA__INIT;
    ad.auth_method_name = (char *)method;
    ad.has_auth_data = 1;
    ad.auth_data = (ProtobufCBinaryData){ len, (uint8_t *)data };
    Pulsar__Proto__CommandAuthChallenge m = PULSAR__PROTO__COMMAND_AUTH_CHALLENGE__INIT;
    m.server_version = (char *)server_version;
    m.challenge = &ad;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.authchallenge = &m;
    return frame(out, &cmd, PULSAR__PROTO__BASE_COMMAND__TYPE__AUTH_CHALLENGE);
}

int bc_error(pc_buf_t *out, uint64_t request_id, int server_error, const char *message)
{
    Pulsar__Proto__CommandError m = PULSAR__PROTO__COMMAND_ERROR__INIT;
    m.request_id = request_id;
    m.error = (Pulsar__Proto__ServerError)server_error;
    m.message = (char *)message;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.error = &m;
    return frame(out, &cmd, PULSAR__PROTO__BASE_COMMAND__TYPE__ERROR);
}

int bc_success(pc_buf_t *out, uint64_t request_id)
{
    Pulsar__Proto__CommandSuccess m = PULSAR__PROTO__COMMAND_SUCCESS__INIT;
    m.request_id = request_id;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.success = &m;
    return frame(out, &cmd, PULSAR__PROTO__BASE_COMMAND__TYPE__SUCCESS);
}

/* ---- lookups ----------------------------------------------------------------------- */

int bc_partitions(pc_buf_t *out, uint64_t request_id, uint32_t partitions)
{
    Pulsar__Proto__CommandPartitionedTopicMetadataResponse m =
        PULSAR__PROTO__COMMAND_PARTITIONED_TOPIC_METADATA_RESPONSE__INIT;
    m.request_id = request_id;
    m.has_partitions = 1;
    m.partitions = partitions;
    m.has_response = 1;
    m.response = PULSAR__PROTO__COMMAND_PARTITIONED_TOPIC_METADATA_RESPONSE__LOOKUP_TYPE__Success;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.partitionmetadataresponse = &m;
    return frame(out, &cmd, PULSAR__PROTO__BASE_COMMAND__TYPE__PARTITIONED_METADATA_RESPONSE);
}

static int lookup(pc_buf_t *out, Pulsar__Proto__CommandLookupTopicResponse *m)
{
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.lookuptopicresponse = m;
    return frame(out, &cmd, PULSAR__PROTO__BASE_COMMAND__TYPE__LOOKUP_RESPONSE);
}

int bc_lookup_connect(pc_buf_t *out, uint64_t request_id, const char *url, const char *url_tls,
                      bool proxy_through_service_url)
{
    Pulsar__Proto__CommandLookupTopicResponse m =
        PULSAR__PROTO__COMMAND_LOOKUP_TOPIC_RESPONSE__INIT;
    m.request_id = request_id;
    m.has_response = 1;
    m.response = PULSAR__PROTO__COMMAND_LOOKUP_TOPIC_RESPONSE__LOOKUP_TYPE__Connect;
    m.brokerserviceurl = (char *)url;
    m.brokerserviceurltls = (char *)url_tls;
    m.has_authoritative = 1;
    m.authoritative = 1;
    m.has_proxy_through_service_url = proxy_through_service_url;
    m.proxy_through_service_url = proxy_through_service_url;
    return lookup(out, &m);
}

int bc_lookup_redirect(pc_buf_t *out, uint64_t request_id, const char *url, const char *url_tls,
                       bool authoritative)
{
    Pulsar__Proto__CommandLookupTopicResponse m =
        PULSAR__PROTO__COMMAND_LOOKUP_TOPIC_RESPONSE__INIT;
    m.request_id = request_id;
    m.has_response = 1;
    m.response = PULSAR__PROTO__COMMAND_LOOKUP_TOPIC_RESPONSE__LOOKUP_TYPE__Redirect;
    m.brokerserviceurl = (char *)url;
    m.brokerserviceurltls = (char *)url_tls;
    m.has_authoritative = 1;
    m.authoritative = authoritative;
    return lookup(out, &m);
}

int bc_lookup_failed(pc_buf_t *out, uint64_t request_id, int server_error, const char *message)
{
    Pulsar__Proto__CommandLookupTopicResponse m =
        PULSAR__PROTO__COMMAND_LOOKUP_TOPIC_RESPONSE__INIT;
    m.request_id = request_id;
    m.has_response = 1;
    m.response = PULSAR__PROTO__COMMAND_LOOKUP_TOPIC_RESPONSE__LOOKUP_TYPE__Failed;
    m.has_error = 1;
    m.error = (Pulsar__Proto__ServerError)server_error;
    m.message = (char *)message;
    return lookup(out, &m);
}

/* ---- producers --------------------------------------------------------------------- */

int bc_producer_success(pc_buf_t *out, uint64_t request_id, const char *producer_name,
                        int64_t last_sequence_id, const ProtobufCBinaryData *schema_version,
                        bool ready, int64_t topic_epoch)
{
    Pulsar__Proto__CommandProducerSuccess m = PULSAR__PROTO__COMMAND_PRODUCER_SUCCESS__INIT;
    m.request_id = request_id;
    m.producer_name = (char *)producer_name;
    m.has_last_sequence_id = 1;
    m.last_sequence_id = last_sequence_id;
    m.has_producer_ready = 1;
    m.producer_ready = ready;
    m.has_topic_epoch = topic_epoch >= 0;
    m.topic_epoch = topic_epoch >= 0 ? (uint64_t)topic_epoch : 0;
    if (schema_version) {
        m.has_schema_version = 1;
        m.schema_version = *schema_version;
    }
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.producer_success = &m;
    return frame(out, &cmd, PULSAR__PROTO__BASE_COMMAND__TYPE__PRODUCER_SUCCESS);
}

int bc_close_producer(pc_buf_t *out, uint64_t producer_id, uint64_t request_id)
{
    Pulsar__Proto__CommandCloseProducer m = PULSAR__PROTO__COMMAND_CLOSE_PRODUCER__INIT;
    m.producer_id = producer_id;
    m.request_id = request_id;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.close_producer = &m;
    return frame(out, &cmd, PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_PRODUCER);
}

int bc_topic_migrated(pc_buf_t *out, uint64_t resource_id, int resource_type, const char *url,
                      const char *url_tls)
{
    Pulsar__Proto__CommandTopicMigrated m = PULSAR__PROTO__COMMAND_TOPIC_MIGRATED__INIT;
    m.resource_id = resource_id;
    m.resource_type = (Pulsar__Proto__CommandTopicMigrated__ResourceType)resource_type;
    m.brokerserviceurl = (char *)url;
    m.brokerserviceurltls = (char *)url_tls;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.topicmigrated = &m;
    return frame(out, &cmd, PULSAR__PROTO__BASE_COMMAND__TYPE__TOPIC_MIGRATED);
}

int bc_receipt(pc_buf_t *out, uint64_t producer_id, uint64_t sequence_id,
               uint64_t highest_sequence_id, uint64_t ledger, uint64_t entry)
{
    Pulsar__Proto__MessageIdData id = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    id.ledgerid = ledger;
    id.entryid = entry;
    Pulsar__Proto__CommandSendReceipt m = PULSAR__PROTO__COMMAND_SEND_RECEIPT__INIT;
    m.producer_id = producer_id;
    m.sequence_id = sequence_id;
    m.message_id = &id;
    m.has_highest_sequence_id = 1;
    m.highest_sequence_id = highest_sequence_id;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.send_receipt = &m;
    return frame(out, &cmd, PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_RECEIPT);
}

int bc_send_error(pc_buf_t *out, uint64_t producer_id, uint64_t sequence_id, int server_error,
                  const char *message)
{
    Pulsar__Proto__CommandSendError m = PULSAR__PROTO__COMMAND_SEND_ERROR__INIT;
    m.producer_id = producer_id;
    m.sequence_id = sequence_id;
    m.error = (Pulsar__Proto__ServerError)server_error;
    m.message = (char *)message;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.send_error = &m;
    return frame(out, &cmd, PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_ERROR);
}

/* ---- schemas ----------------------------------------------------------------------- */

static int get_schema(pc_buf_t *out, Pulsar__Proto__CommandGetSchemaResponse *m)
{
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.getschemaresponse = m;
    return frame(out, &cmd, PULSAR__PROTO__BASE_COMMAND__TYPE__GET_SCHEMA_RESPONSE);
}

int bc_get_schema(pc_buf_t *out, uint64_t request_id, const Pulsar__Proto__Schema *schema,
                  ProtobufCBinaryData version)
{
    Pulsar__Proto__CommandGetSchemaResponse m = PULSAR__PROTO__COMMAND_GET_SCHEMA_RESPONSE__INIT;
    m.request_id = request_id;
    m.schema = (Pulsar__Proto__Schema *)schema;
    m.has_schema_version = 1;
    m.schema_version = version;
    return get_schema(out, &m);
}

int bc_get_schema_error(pc_buf_t *out, uint64_t request_id, int server_error, const char *message)
{
    Pulsar__Proto__CommandGetSchemaResponse m = PULSAR__PROTO__COMMAND_GET_SCHEMA_RESPONSE__INIT;
    m.request_id = request_id;
    m.has_error_code = 1;
    m.error_code = (Pulsar__Proto__ServerError)server_error;
    m.error_message = (char *)message;
    return get_schema(out, &m);
}

static int schema_answer(pc_buf_t *out, Pulsar__Proto__CommandGetOrCreateSchemaResponse *m)
{
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.getorcreateschemaresponse = m;
    return frame(out, &cmd, PULSAR__PROTO__BASE_COMMAND__TYPE__GET_OR_CREATE_SCHEMA_RESPONSE);
}

int bc_schema_version(pc_buf_t *out, uint64_t request_id, ProtobufCBinaryData version)
{
    Pulsar__Proto__CommandGetOrCreateSchemaResponse m =
        PULSAR__PROTO__COMMAND_GET_OR_CREATE_SCHEMA_RESPONSE__INIT;
    m.request_id = request_id;
    m.has_schema_version = 1;
    m.schema_version = version;
    return schema_answer(out, &m);
}

int bc_schema_error(pc_buf_t *out, uint64_t request_id, int server_error, const char *message)
{
    Pulsar__Proto__CommandGetOrCreateSchemaResponse m =
        PULSAR__PROTO__COMMAND_GET_OR_CREATE_SCHEMA_RESPONSE__INIT;
    m.request_id = request_id;
    m.has_error_code = 1;
    m.error_code = (Pulsar__Proto__ServerError)server_error;
    m.error_message = (char *)message;
    return schema_answer(out, &m);
}

/* ---- the transaction coordinator --------------------------------------------------- */

/* The NEW_TXN, ADD_PARTITION_TO_TXN and END_TXN answers share their fields. */
#define BC_TXN_FIELDS(m)                                                                \
    do {                                                                                \
        (m).request_id = request_id;                                                    \
        (m).has_txnid_most_bits = (m).has_txnid_least_bits = 1;                         \
        (m).txnid_most_bits = most;                                                     \
        (m).txnid_least_bits = least;                                                   \
        (m).has_error = server_error >= 0;                                              \
        (m).error = (Pulsar__Proto__ServerError)(server_error >= 0 ? server_error : 0); \
        (m).message = server_error >= 0 ? (char *)message : NULL;                       \
    } while (0)

int bc_txn_response(pc_buf_t *out, int type, uint64_t request_id, uint64_t most, uint64_t least,
                    int server_error, const char *message)
{
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    Pulsar__Proto__CommandTcClientConnectResponse tc =
        PULSAR__PROTO__COMMAND_TC_CLIENT_CONNECT_RESPONSE__INIT;
    Pulsar__Proto__CommandNewTxnResponse nt = PULSAR__PROTO__COMMAND_NEW_TXN_RESPONSE__INIT;
    Pulsar__Proto__CommandAddPartitionToTxnResponse ap =
        PULSAR__PROTO__COMMAND_ADD_PARTITION_TO_TXN_RESPONSE__INIT;
    Pulsar__Proto__CommandEndTxnResponse et = PULSAR__PROTO__COMMAND_END_TXN_RESPONSE__INIT;
    switch (type) {
    case PULSAR__PROTO__BASE_COMMAND__TYPE__TC_CLIENT_CONNECT_REQUEST:
        tc.request_id = request_id;
        tc.has_error = server_error >= 0;
        tc.error = (Pulsar__Proto__ServerError)(server_error >= 0 ? server_error : 0);
        tc.message = server_error >= 0 ? (char *)message : NULL;
        cmd.tcclientconnectresponse = &tc;
        return frame(out, &cmd, PULSAR__PROTO__BASE_COMMAND__TYPE__TC_CLIENT_CONNECT_RESPONSE);
    case PULSAR__PROTO__BASE_COMMAND__TYPE__NEW_TXN:
        BC_TXN_FIELDS(nt);
        cmd.newtxnresponse = &nt;
        return frame(out, &cmd, PULSAR__PROTO__BASE_COMMAND__TYPE__NEW_TXN_RESPONSE);
    case PULSAR__PROTO__BASE_COMMAND__TYPE__ADD_PARTITION_TO_TXN:
        BC_TXN_FIELDS(ap);
        cmd.addpartitiontotxnresponse = &ap;
        return frame(out, &cmd, PULSAR__PROTO__BASE_COMMAND__TYPE__ADD_PARTITION_TO_TXN_RESPONSE);
    case PULSAR__PROTO__BASE_COMMAND__TYPE__END_TXN:
        BC_TXN_FIELDS(et);
        cmd.endtxnresponse = &et;
        return frame(out, &cmd, PULSAR__PROTO__BASE_COMMAND__TYPE__END_TXN_RESPONSE);
    default:
        return -1;
    }
}
