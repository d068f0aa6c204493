/* version.h — the version string `specgen --version` prints. */
#ifndef SG_VERSION_H
#define SG_VERSION_H
#define SG_VERSION "0.1.0"
#endif
