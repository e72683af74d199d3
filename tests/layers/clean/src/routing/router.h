#include "common/buf.h"
#include <pulsarc/pulsarc.h>
