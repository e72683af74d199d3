/* the module's private header: includes its public one, included by its .c files */
#include "producer/producer.h"
