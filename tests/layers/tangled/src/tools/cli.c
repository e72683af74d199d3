#include <pulsarc/pulsarc.h>
#include "common/buf.h"
