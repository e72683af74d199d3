/* The library's version, as compiled in (see pulsarc.h: the header's may differ). */
#include "pulsarc/pulsarc.h"

int pulsarc_version(void)
{
    return PULSARC_VERSION;
}

const char *pulsarc_version_string(void)
{
    return PULSARC_VERSION_STRING;
}
