/* HTML escaping: everything a model or a database wrote goes through here, so a candidate
 * that contains <script> is shown as text and never runs. */
#include "results/internal.h"

void sg_html_escape(FILE *out, const char *s, long n) {
    if (!s) return;
    for (long i = 0; s[i] && (n < 0 || i < n); i++) {
        switch (s[i]) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&#39;", out); break;
        default: fputc(s[i], out);
        }
    }
}
