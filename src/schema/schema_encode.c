/* Value encoders, byte for byte as the Java client's primitive schemas write values:
 * big-endian integers (ByteBuffer's order), IEEE 754 bits for FLOAT and DOUBLE. */
#include "schema/schema.h"

#include <string.h>

static size_t put_be(uint64_t v, size_t width, uint8_t *out)
{
    for (size_t i = 0; i < width; i++)
        out[i] = (uint8_t)(v >> (8 * (width - 1 - i)));
    return width;
}

size_t pulsarc_schema_encode_bool(int value, uint8_t out[1])
{
    out[0] = value ? 1 : 0;
    return 1;
}

size_t pulsarc_schema_encode_int8(int8_t value, uint8_t out[1])
{
    return put_be((uint8_t)value, 1, out);
}

size_t pulsarc_schema_encode_int16(int16_t value, uint8_t out[2])
{
    return put_be((uint16_t)value, 2, out);
}

size_t pulsarc_schema_encode_int32(int32_t value, uint8_t out[4])
{
    return put_be((uint32_t)value, 4, out);
}

size_t pulsarc_schema_encode_int64(int64_t value, uint8_t out[8])
{
    return put_be((uint64_t)value, 8, out);
}

size_t pulsarc_schema_encode_float(float value, uint8_t out[4])
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits); /* Float.floatToIntBits: NaN is written as given */
    return put_be(bits, 4, out);
}

size_t pulsarc_schema_encode_double(double value, uint8_t out[8])
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    return put_be(bits, 8, out);
}

size_t pulsarc_schema_encode_instant(int64_t seconds, int32_t nanos, uint8_t out[12])
{
    put_be((uint64_t)seconds, 8, out);
    return 8 + put_be((uint32_t)nanos, 4, out + 8);
}

size_t pulsarc_schema_encode_local_date_time(int64_t epoch_day, int64_t nano_of_day,
                                             uint8_t out[16])
{
    put_be((uint64_t)epoch_day, 8, out);
    return 8 + put_be((uint64_t)nano_of_day, 8, out + 8);
}
