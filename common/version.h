/* version.h — specgen's version and the commit it was built from: what `specgen --version`
 * prints and every /metrics' specgen_build_info carries. */
#ifndef SG_VERSION_H
#define SG_VERSION_H
#define SG_VERSION "0.1.0"

/* The git commit the binary was built from (short hash, "-dirty" when the tree had
 * changes), or "" when unknown (built outside a git checkout). */
const char *sg_version_commit(void);
#endif
