// The system zlib, for the raw DEFLATE stream Core Data keeps its model in. `inflateInit2` is a macro; the inline
// function below is what Swift can call.
#ifndef FAULTLINE_CZLIB_SHIM_H
#define FAULTLINE_CZLIB_SHIM_H

#include <zlib.h>

/// `inflateInit2(stream, windowBits)`, callable from Swift.
static inline int faultline_inflateInit2(z_streamp stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}

/// `deflateInit2(stream, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY)`, callable from Swift (the tests
/// compress archives of their own with it).
static inline int faultline_deflateInit2(z_streamp stream, int level, int windowBits) {
    return deflateInit2(stream, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY);
}

#endif
