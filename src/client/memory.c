/* The one way memory the library allocated for the caller goes back: the library's own
 * free(), whichever allocator the program uses (pulsarc.h, "Ownership"). */
#include <stdlib.h>

#include "pulsarc/pulsarc.h"

void pulsarc_free(void *ptr)
{
    free(ptr);
}
