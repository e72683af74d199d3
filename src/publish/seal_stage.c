/* Sealing, for a producer with both spoolDir and encryptionKeys: each message is
 * compressed and encrypted on the sending thread, before the spool appends it, so the
 * spool holds ciphertext only, and a resend after a crash needs nothing but the record
 * (producer/sealed.h). The spool stage calls it first (spool_stage.c): what is
 * encrypted comes before what is stored.
 *
 * The sealer's data key is its own (the partition producers keep theirs for the
 * messages they encrypt themselves), under a mutex that senders hold only to take the
 * key, its wrapped copies and their IVs; compression and encryption run outside it. A
 * message that cannot be encrypted is refused (PULSARC_ERR_CRYPTO) whatever
 * cryptoFailureAction says: sent unencrypted, it would be on disk in clear.
 * @locality any thread. */
#include <stdlib.h>
#include <uv.h>

#include "publish/seal_stage.h"

#include "publish/producer.h"
#include "common/clock.h"
#include "common/error.h"
#include "producer/op_build.h"
#include "producer/sealed.h"

struct pc_sealer {
    uv_mutex_t mu;
    pc_encryptor_t *enc;
};

pulsarc_result pc_seal_stage_open(pulsarc_producer_t *p)
{
    if (!p->spool || !p->conf.encryption_keys || !p->conf.encryption_keys[0])
        return PULSARC_OK;
    pc_pp_settings_t pp;
    pc_producer_config_pp(&p->conf, &pp);
    pc_enc_settings_t set = pp.encryption;
    set.failure_action = PC_CRYPTO_FAIL;
    pc_sealer_t *s = calloc(1, sizeof *s);
    bool oom = false;
    if (!s || uv_mutex_init(&s->mu) != 0) {
        free(s);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    if (!(s->enc = pc_encryptor_new(&set, &p->client->log, p->topic.full, &oom))) {
        uv_mutex_destroy(&s->mu);
        free(s);
        /* Not oom: the names were all blank, so there is nothing to encrypt for. */
        return oom ? pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory") : PULSARC_OK;
    }
    p->sealer = s;
    return PULSARC_OK;
}

void pc_seal_stage_close(pulsarc_producer_t *p)
{
    pc_sealer_t *s = p->sealer;
    if (!s)
        return;
    pc_encryptor_free(s->enc);
    uv_mutex_destroy(&s->mu);
    free(s);
    p->sealer = NULL;
}

/* What the loop thread would frame the message under: where its pieces are cut. */
static void frame_params(const pulsarc_producer_t *p, pc_op_params_t *out)
{
    *out = (pc_op_params_t){
        .producer_name = p->conf.producer_name,
        .codec = p->conf.compression,
        .max_message_size = atomic_load(&p->max_message_size),
        .chunking = p->conf.chunking_enabled,
        .chunk_size = (size_t)p->conf.chunk_max_size,
    };
}

/* Under the sealer's lock: the data key, how the message is cut, and what sealing takes
 * of the key (the key itself, the wrapped copies, an IV per piece). */
static pulsarc_result begin(pulsarc_producer_t *p, const pc_msg_t *m, size_t len, pc_sealed_t **out)
{
    pc_sealer_t *s = p->sealer;
    pc_op_params_t params;
    frame_params(p, &params);
    size_t piece_len = 0;
    uv_mutex_lock(&s->mu);
    pulsarc_result res = pc_encryptor_next(s->enc, pc_mono_ms(), &params.enc);
    if (res == PULSARC_OK)
        res = pc_op_sealed_piece_len(&params, m, len, &piece_len);
    if (res == PULSARC_OK)
        res = pc_sealed_begin(params.enc, params.codec, m->payload_len, len, piece_len, out);
    uv_mutex_unlock(&s->mu);
    return res;
}

pulsarc_result pc_seal_stage_seal(pulsarc_producer_t *p, pc_send_t *send)
{
    pc_msg_t *m = &send->msg;
    const uint8_t *data = m->payload;
    size_t len = m->payload_len;
    pc_buf_t compressed;
    pc_buf_init(&compressed);
    if (p->conf.compression != PC_CODEC_NONE && len > 0) {
        if (pc_compress_level(p->conf.compression, p->conf.compression_level, data, len,
                              &compressed) != 0)
            return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory compressing the message");
        data = compressed.data;
        len = compressed.len;
    }
    pc_sealed_t *sealed = NULL;
    pulsarc_result res = begin(p, m, len, &sealed);
    if (res == PULSARC_OK)
        res = pc_sealed_finish(sealed, data, len);
    pc_buf_free(&compressed);
    if (res != PULSARC_OK) {
        pc_sealed_free(sealed);
        return res;
    }
    m->sealed = sealed;
    return PULSARC_OK;
}
