/* The CLI's progress line (issue 17: ~104 columns broke an 80-column terminal into a new line
 * every redraw; the ETA was printed as "2830.9s"): it fits the terminal (columns - 1, the last
 * column left empty) at any width, shortening then dropping the bar; plain lines for logs carry
 * everything; times are h:mm:ss. */
#include "cli/cli.h"
#include "testing.h"

#include <string.h>

static void test_times(void) {
    static const struct {
        double s;
        const char *want;
    } cases[] = {{0.0, "0:00:00"},  {2830.9, "0:47:11"}, {59.4, "0:00:59"},
                 {59.6, "0:01:00"}, {3600.0, "1:00:00"}, {360000.0, "100:00:00"},
                 {-1.0, "-:--:--"}, {1e30, "-:--:--"},   {(double)NAN, "-:--:--"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        char buf[32];
        progress_format_time(cases[i].s, buf, sizeof buf);
        CHECK(strcmp(buf, cases[i].want) == 0, "%g s: '%s', want '%s'", cases[i].s, buf, cases[i].want);
    }
}

static void test_widths(void) {
    /* a long render: large counts and rates make the longest line */
    caustic_progress p = {123456, 1048576, 2830.9, 0.0, 0.117734, 123456789.0};
    char line[512];
    int plain = progress_line(&p, "render", 0, line, sizeof line);
    CHECK(plain == (int)strlen(line) && strstr(line, "123456/1048576 spp") && strstr(line, "ETA 5:53:") &&
              strstr(line, "0:47:11") && !strchr(line, '['),
          "log line: '%s'", line);
    for (int cols = 1; cols <= 200; ++cols) {
        int len = progress_line(&p, "render", cols, line, sizeof line);
        CHECK(len == (int)strlen(line) && len <= cols - 1, "%d columns: %d characters: '%s'", cols, len, line);
        if (cols >= 80) CHECK(strchr(line, '[') && strstr(line, "spp"), "%d columns: bar and counts: '%s'", cols, line);
    }
    progress_line(&p, "render", 80, line, sizeof line);
    CHECK(strlen(line) <= 79, "80 columns: %zu characters", strlen(line));
}

int main(void) {
    test_times();
    test_widths();
    return test_result("test_progress");
}
