#include "pulsarc/pulsarc.h"
