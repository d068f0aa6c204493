/* `results export`: every table as JSON (one object, a key per table) or CSV (one table to
 * stdout, or one TABLE.csv per table in a folder). */
#include "results/internal.h"

#include "common/paths.h"
#include "common/wfile.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const tables[] = {"campaign",  "task", "iteration",  "generation",
                                     "candidate", "job",  "pool_split", "event"};
#define NTABLES (sizeof tables / sizeof *tables)

static int table_known(const char *t) {
    for (size_t i = 0; i < NTABLES; i++)
        if (!strcmp(tables[i], t)) return 1;
    return 0;
}

static int dump(sg_results *r, const char *table, sg_results_fmt fmt, FILE *out, sg_err *err) {
    char sql[96];
    /* the row id first: iteration's is implicit, and every row needs a name to join on */
    snprintf(sql, sizeof sql, "SELECT %s* FROM %s ORDER BY rowid",
             strcmp(table, "iteration") ? "" : "rowid AS id, ", table);
    return sg_results_query(r, sql, NULL, 0, fmt, 0, out, err) < 0 ? -1 : 0;
}

int sg_results_export(sg_results *r, sg_results_fmt fmt, const char *table, const char *dir,
                      FILE *out, sg_err *err) {
    if (table && !table_known(table))
        return sg_errf(err,
                       "--table '%s': no such table (campaign, task, iteration, generation, "
                       "candidate, job, pool_split, event)",
                       table);
    if (fmt == SG_RESULTS_JSON) {
        fputs("{", out);
        int first = 1;
        for (size_t i = 0; i < NTABLES; i++) {
            if (table && strcmp(table, tables[i])) continue;
            fprintf(out, "%s\"%s\": ", first ? "\n" : ",\n", tables[i]);
            first = 0;
            if (dump(r, tables[i], fmt, out, err) < 0) return -1;
        }
        fputs("}\n", out);
        return 0;
    }
    if (table) return dump(r, table, fmt, out, err);
    if (!dir)
        return sg_errf(err, "a CSV file holds one table: name it with --table (e.g. --table "
                            "candidate), or give -o DIR for one TABLE.csv per table");
    if (sg_mkdir_p(dir, err) < 0) return sg_err_prefix(err, "export folder %s", dir);
    for (size_t i = 0; i < NTABLES; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s.csv", dir, tables[i]);
        FILE *f;
        int rc = sg_wfile_fopen(path, 0, &f, err);
        if (rc < 0) return rc;
        rc = dump(r, tables[i], fmt, f, err);
        if (fclose(f) != 0 && rc == 0)
            return sg_errf(err, "cannot write %s: %s", path, strerror(errno));
        if (rc < 0) return -1;
    }
    return 0;
}
