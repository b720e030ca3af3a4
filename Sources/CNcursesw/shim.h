// The parts of ncursesw (wide-character build) and the C library that Swift cannot import as they are: macros,
// globals and variadics, each wrapped in a small inline function.
#ifndef FAULTLINE_CNCURSESW_SHIM_H
#define FAULTLINE_CNCURSESW_SHIM_H

#define _XOPEN_SOURCE_EXTENDED 1
#define NCURSES_WIDECHAR 1
#include <locale.h>
#include <langinfo.h>
#include <wchar.h>
#include <errno.h>
#include <unistd.h>
#include <ncursesw/curses.h>

// Hidden by Swift's Glibc module. Only the tests call it: they compare `DisplayWidth`'s table with it.
extern int wcwidth(wchar_t c);

// From term.h, left out for the macros it defines over common names (lines, columns…): reads a terminal's
// description without setting up a screen.
extern int setupterm(const char *term, int filedes, int *errret);

// Globals (not concurrency-safe as Swift sees them).
static inline WINDOW *faultline_stdscr(void) { return stdscr; }
static inline int faultline_colors(void) { return COLORS; }
static inline int faultline_color_pairs(void) { return COLOR_PAIRS; }

// Attribute macros.
static inline attr_t faultline_a_normal(void) { return A_NORMAL; }
static inline attr_t faultline_a_bold(void) { return A_BOLD; }
static inline attr_t faultline_a_reverse(void) { return A_REVERSE; }
static inline attr_t faultline_a_underline(void) { return A_UNDERLINE; }
static inline attr_t faultline_a_dim(void) { return A_DIM; }
static inline attr_t faultline_color_pair(int pair) { return (attr_t)COLOR_PAIR(pair); }

// Key codes that are function-like macros.
static inline int faultline_key_f(int n) { return KEY_F(n); }

// Mouse masks.
static inline mmask_t faultline_button1_pressed(void) { return BUTTON1_PRESSED; }
static inline mmask_t faultline_button1_clicked(void) { return BUTTON1_CLICKED; }
static inline mmask_t faultline_button4_pressed(void) { return BUTTON4_PRESSED; }
static inline mmask_t faultline_button5_pressed(void) { return BUTTON5_PRESSED; }
static inline mmask_t faultline_all_mouse_events(void) { return ALL_MOUSE_EVENTS; }

// SGR mouse reports (xterm's private mode 1006) on or off, written straight to the terminal (putp would go through
// stdio's buffer, out of order with ncurses's own output). Only write(2), so the crash and exit hooks can call it.
static inline void faultline_sgr_mouse(int fd, int on) {
    const char *sequence = on ? "\033[?1006h" : "\033[?1006l";
    size_t written = 0;
    while (written < 8) {
        ssize_t count = write(fd, sequence + written, 8 - written);
        if (count > 0) written += (size_t)count;
        else if (count < 0 && errno == EINTR) continue;
        else break;
    }
}

// The standard streams (C globals), for newterm.
static inline FILE *faultline_stdin(void) { return stdin; }
static inline FILE *faultline_stdout(void) { return stdout; }

#endif
