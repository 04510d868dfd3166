/* cachedir.h - where sandy and sandyfs keep the projects' stores
 * ($SANDY_CACHE_DIR, else $XDG_CACHE_HOME/sandy (absolute), else
 * ~/.cache/sandy: $HOME, or the passwd entry's home) and read the user's
 * rule files, and making such a directory. One rule, because sandy binds
 * these directories into sandyfs's own container, where sandyfs must find
 * the same ones. */
#ifndef SANDY_COMMON_CACHEDIR_H
#define SANDY_COMMON_CACHEDIR_H

/* The directory (malloc'ed), or NULL when no home is known or out of
 * memory. */
char *sandy_cache_dir(void);

/* The user's configuration directory, whose rules.d sandyfs reads:
 * $SANDY_CONFIG_DIR, else $XDG_CONFIG_HOME/sandy (absolute), else
 * ~/.config/sandy ($HOME). Malloc'ed, or NULL when there is no home. The
 * same rule, for the same reason: sandy binds it into sandyfs's
 * container. */
char *sandy_config_dir(void);

/* mkdir -p PATH, the last component with MODE: 0 or -errno. */
int sandy_make_path(const char *path, unsigned mode);

#endif
