// The system zlib, for the raw DEFLATE stream Core Data keeps its model in. `inflateInit2` is a macro; the inline
// function below is what Swift can call.
#ifndef FAULTLINE_CZLIB_SHIM_H
#define FAULTLINE_CZLIB_SHIM_H

#include <zlib.h>

/// `inflateInit2(stream, windowBits)`, callable from Swift.
static inline int faultline_inflateInit2(z_streamp stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}

#endif
