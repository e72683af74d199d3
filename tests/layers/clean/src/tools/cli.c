#include <stdio.h>
#include <pulsarc/pulsarc.h>
