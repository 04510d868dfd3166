/* run.c - one session from start to end: the host checks, the session
 * directory, the sandyfs mount, the command in its runtime, the loop that
 * waits for the command while watching signals and the sandyfs daemon, and
 * the teardown that runs however the session ends. */

#include "run.h"
#include "agentgit.h"
#include "runtime/engine.h"
#include "runtime/fsbox.h"
#include "runtime/gateway.h"
#include "sys/host.h"
#include "runtime/nslimits.h"
#include "runtime/nsrun.h"
#include "sys/platform.h"
#include "policy_note.h"
#include "sys/proc.h"
#include "runtime/fsquery.h"
#include "runtime/sandyfs.h"
#include "session.h"
#include "summary.h"
#include "world/world.h"

#include "common/cachedir.h"
#include "common/mountinfo.h"
#include "common/quote.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

/* Seconds a container gets between SIGTERM and SIGKILL when sandy stops
 * it, and how long after that the client may take to notice. */
#define STOP_GRACE   5
#define CLIENT_GRACE 3

struct run {
	const struct sandy_opts *o;
	char project[PATH_MAX];
	char *shown;		/* PROJECT as messages show it (quote.h) */
	const char *engine;	/* "docker", "podman", or NULL: --runtime=none */
	struct sandyfs_prog fs; /* argv.n 0 with --fs=bind */
	char *bwrap;		/* --runtime=none */
	struct world world;
	struct host_user user;
	struct session s;
	bool have_session, view_shared, mounted;
	struct sandyfs_daemon daemon;
	/* sandyfs in a container of its own, in the engine's world. */
	bool in_engine;
	bool box_only; /* the engine cannot see a mount made here, known before asking */
	struct fsbox box;
	const char *fs_image;
	struct git_snapshot *launch;
	char *container;
	struct policy_rules rules; /* what sandyfs serves, when it does */
	struct strv allow;	   /* the network allowlist */
	struct gateway gateway;	   /* or, without a container, the proxy */
	struct host_limits limits;
	struct nslimits nslimits; /* without a container */
	const char *gateway_image;
	char *host_git;		   /* the project's git directory: the agent has its own */
	char *host_git_seen;	   /* where the agent's alternates find it */
	struct agentgit_gate gate; /* --push-gate */
	int sigfd;
	sigset_t oldmask;
	bool signals_blocked;

	pid_t child;
	int status;	/* the command's, once it has ended */
	int stopped_by; /* the signal that made sandy stop the session */
	bool sandyfs_died;
	bool stopping;
	struct timespec kill_at; /* when to give up waiting for the child */
};

static const int session_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD};

static long ms_until(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (t->tv_sec - now.tv_sec) * 1000 + (t->tv_nsec - now.tv_nsec) / 1000000;
}

static void deadline_in(struct timespec *t, int seconds)
{
	clock_gettime(CLOCK_MONOTONIC, t);
	t->tv_sec += seconds;
}

static const char *signal_name(int sig)
{
	switch (sig) {
	case SIGINT:
		return "SIGINT";
	case SIGTERM:
		return "SIGTERM";
	case SIGHUP:
		return "SIGHUP";
	case SIGQUIT:
		return "SIGQUIT";
	case SIGKILL:
		return "SIGKILL";
	default:
		return strsignal(sig);
	}
}

/* Chooses the runtime: the one asked for (checked later, after the cheaper
 * local checks), or the first engine that answers. */
static int pick_runtime(struct run *r)
{
	switch (r->o->runtime) {
	case SANDY_RUNTIME_DOCKER:
		r->engine = "docker";
		return 0;
	case SANDY_RUNTIME_PODMAN:
		r->engine = "podman";
		return 0;
	case SANDY_RUNTIME_NONE:
		return 0;
	case SANDY_RUNTIME_AUTO:
		break;
	}
	r->engine = engine_auto();
	if (r->engine)
		return 0;
	/* Never silently without a container: the user chooses. */
	if (host_find_program("docker", NULL))
		sandy_error("docker is installed but its daemon does not answer; start it (e.g. "
			    "'sudo systemctl start docker', or 'sudo dockerd &'), or run in a "
			    "bubblewrap sandbox without a container: --runtime=none");
	else if (host_find_program("podman", NULL))
		sandy_error("podman does not answer; check 'podman info', or run in a bubblewrap "
			    "sandbox without a container: --runtime=none");
	else
		sandy_error("no container engine found; install one (e.g. 'sudo apt-get install "
			    "docker.io'), or run in a bubblewrap sandbox without a container: "
			    "--runtime=none");
	return -EHOSTDOWN;
}

static int resolve_project(struct run *r)
{
	struct stat st;

	if (!realpath(r->o->project, r->project)) {
		int e = errno;
		cleanup_free char *shown = quote_str(r->o->project);
		sandy_error("cannot use project directory '%s': %s", quoted(shown), strerror(e));
		return -e;
	}
	/* The project's name is anyone's: a clone's directory, say. */
	if (!(r->shown = quote_str(r->project)))
		return -ENOMEM;
	if (stat(r->project, &st) < 0 || !S_ISDIR(st.st_mode)) {
		sandy_error("cannot use project directory '%s': not a directory", r->shown);
		return -ENOTDIR;
	}
	return 0;
}

/* Rootless podman keeps one mount namespace for all its containers, made
 * at its first run; a mount made later on the host (sandyfs's) reaches it
 * only when / is a shared mount, as on systemd hosts. Without that, the
 * agent would see the empty directory under the mount: sandyfs serves in
 * podman's namespace instead, unless told to serve here. */
static int check_rootless_podman(struct run *r)
{
	if (host_root_shared())
		return 0;
	if (r->o->fs_mode != SANDY_FS_MODE_HOST) {
		r->box_only = true;
		return 0;
	}
	sandy_error("rootless podman cannot see the sandyfs mount on this host, whose / is not a "
		    "shared mount; make it one ('sudo mount --make-rshared /'), or let sandyfs "
		    "serve in podman's namespace (--fs-mode=auto), or use docker, or "
		    "--runtime=none");
	return -EXDEV;
}

/* The gateway image, with what to do when it is missing. */
static int gateway_image_check(struct run *r)
{
	const char *env = getenv("SANDY_GATEWAY_IMAGE");

	r->gateway_image = env && *env ? env : SANDY_DEFAULT_GATEWAY_IMAGE;
	if (engine_has_image(r->engine, r->gateway_image))
		return 0;
	sandy_error("the network gateway's image '%s' is not in %s; build it with 'sandy "
		    "build-image' (or 'sandy build-image --gateway-only'), or run without the "
		    "allowlist: --network=open, or without network: --network=none",
		    r->gateway_image, r->engine);
	return -ENOENT;
}

static int host_checks(struct run *r)
{
	int e = resolve_project(r);

	if (e == 0)
		e = host_limits(&r->limits);
	if (e == 0)
		e = host_user(&r->user);
	if (e == -ENOMEM)
		sandy_error("out of memory");
	if (e == 0)
		e = pick_runtime(r);
	if (e == 0 && !SANDY_LINUX_HOST && !r->engine) {
		sandy_error("--runtime=none runs the command under bubblewrap, which needs Linux; "
			    "use a container engine (docker or podman)");
		e = -ENOTSUP;
	}
	if (e == 0 && !SANDY_LINUX_HOST && r->o->fs == SANDY_FS_FUSE &&
	    r->o->fs_mode == SANDY_FS_MODE_HOST) {
		sandy_error("--fs-mode=host mounts sandyfs on this host, which needs Linux; let "
			    "sandy serve in the engine's world (--fs-mode=auto or container)");
		e = -ENOTSUP;
	}
	if (e == 0 && !r->engine && !host_find_program("bwrap", &r->bwrap)) {
		sandy_error("cannot find 'bwrap', which --runtime=none runs the command in; "
			    "install bubblewrap (e.g. 'sudo apt-get install bubblewrap')");
		e = -ENOENT;
	}
	if (e == 0 && r->o->fs == SANDY_FS_BIND && r->o->rule_args.n)
		sandy_note("--type, --rules and --no-detect have no effect with --fs=bind (no "
			   "policy)");
	if (e == 0 && r->o->fs == SANDY_FS_FUSE && SANDY_LINUX_HOST && r->engine &&
	    !strcmp(r->engine, "podman") && geteuid() != 0)
		e = check_rootless_podman(r);
	if (e == 0 && r->o->fs == SANDY_FS_FUSE) {
		if ((e = sandyfs_prog_find(&r->fs, r->engine, r->project, &r->o->rule_args)) < 0)
			return e;
		bool other = host_mount_needs_allow_other(r->engine != NULL, &r->user);
		/* The portable shape mounts nothing on this host, nor does a
		 * session that serves in the engine's world for certain. */
		if (SANDY_LINUX_HOST && !r->box_only && r->o->fs_mode != SANDY_FS_MODE_CONTAINER)
			e = host_check_fuse(other);
	}
	if (e == 0 && r->engine && r->o->runtime != SANDY_RUNTIME_AUTO)
		e = engine_check(r->engine, false);
	if (e == 0 && r->engine)
		e = engine_image_check(r->engine, r->o->image);
	if (e == 0 && r->engine)
		e = engine_agent_check(r->engine, r->o->image, r->o->command);
	/* What the user wrote is said wrong before what is missing. */
	if (e == 0 && r->o->network == EGRESS_FILTERED)
		e = gateway_check_inputs(r->o->agent, &r->o->allow_args, &r->user,
					 r->engine != NULL);
	if (e == 0 && r->engine && r->o->network == EGRESS_FILTERED)
		e = gateway_image_check(r);
	return e;
}

static int block_signals(struct run *r)
{
	int e = platform_signals_open(session_signals, ARRAY_SIZE(session_signals), &r->oldmask,
				      &r->sigfd);

	r->signals_blocked = e == 0;
	return e;
}

static void unblock_signals(struct run *r)
{
	if (r->signals_blocked)
		platform_signals_close(r->sigfd, &r->oldmask);
	r->sigfd = -1;
	r->signals_blocked = false;
}

static int start_host_mount(struct run *r)
{
	struct mount_entry e;
	int e2;

	/* A shared parent lets the container's rslave bind follow what is
	 * mounted below it. Only root can make one; elsewhere the system's
	 * own propagation (shared on systemd hosts) decides. */
	if (geteuid() == 0) {
		e2 = platform_share_dir(r->s.view);
		if (e2 < 0)
			sandy_note("cannot make '%s' a shared mount (%s); the container will not "
				   "see a remounted sandyfs",
				   r->s.view, strerror(-e2));
		r->view_shared = e2 == 0;
	}
	bool other = host_mount_needs_allow_other(r->engine != NULL, &r->user);
	/* The directory under the mount, kept to close it once covered. */
	cleanup_fd int under = open(r->s.mountpoint, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	e2 = sandyfs_mount(r->fs.path, &r->o->rule_args, other, r->s.audit, r->s.pidfile,
			   r->host_git_seen, r->project, r->s.mountpoint);
	if (e2 < 0) {
		sandy_error("cannot serve '%s' through sandyfs", r->shown);
		return e2;
	}
	r->mounted = true;
	/* A runtime whose mount namespace does not receive the mount (rootless
	 * podman on a host whose / is not shared) would show the agent this
	 * bare directory: with no permission bits, it cannot work in it
	 * unnoticed. (fusermount3 wants write access to it until it mounts.) */
	if (under < 0 || fchmod(under, 0) < 0)
		sandy_note("cannot close the directory under the mount '%s': %s", r->s.mountpoint,
			   strerror(errno));
	e2 = sandyfs_watch(r->s.pidfile, &r->daemon);
	if (e2 < 0) {
		sandy_error("cannot watch the sandyfs daemon (pid file '%s'): %s", r->s.pidfile,
			    strerror(-e2));
		return e2;
	}
	if (mount_lookup(r->s.mountpoint, &e) <= 0 || strncmp(e.fstype, "fuse", 4) != 0) {
		sandy_error("sandyfs reported success but '%s' is not mounted", r->s.mountpoint);
		return -EIO;
	}
	return 0;
}

static int start_box(struct run *r)
{
	cleanup_free char *root = sandy_cache_dir();
	cleanup_free char *pidfile = sandy_asprintf("%s/fsbox.pid", r->s.dir);
	cleanup_free char *name = fsbox_name(r->s.id);
	cleanup_free char *engine_root = NULL;
	int e;

	if (!root || !pidfile || !name)
		return -ENOMEM;
	if ((e = fsbox_engine_root(r->engine, r->s.rundir, &engine_root)) < 0)
		return e;
	if ((e = fsbox_image_check(r->engine, r->fs_image)) < 0)
		return e;
	if ((e = session_record(&r->s, "fsbox", name)) < 0 ||
	    (e = session_record(&r->s, "fsbox-root", engine_root)) < 0) {
		sandy_error("cannot write to session directory '%s': %s", r->s.dir, strerror(-e));
		return e;
	}
	struct fsbox_spec spec = {
		.engine = r->engine,
		.image = r->fs_image,
		.session_id = r->s.id,
		.engine_root = engine_root,
		.session_dir = r->s.dir,
		.project = r->project,
		.store_root = root,
		.audit = r->s.audit,
		.pidfile = pidfile,
		.git_seen_at = r->host_git_seen,
		.rule_args = &r->o->rule_args,
	};
	e = fsbox_start(&spec, &r->box);
	r->in_engine = r->box.started;
	return e;
}

/* Where sandyfs serves (enum sandy_fs_mode): auto mounts on this host and
 * asks the engine whether a container sees that mount; when it does not,
 * the mount goes and sandyfs serves in the engine's world instead. */
static int start_serving(struct run *r)
{
	r->fs_image = fsbox_image();
	if (r->box_only && !r->o->quiet)
		sandy_note(
			"rootless podman does not see this host's mounts (/ is not a shared "
			"mount); sandyfs serves in a container of its own in podman's namespace");
	if (r->engine &&
	    (r->o->fs_mode == SANDY_FS_MODE_CONTAINER || !SANDY_LINUX_HOST || r->box_only))
		return start_box(r);
	int e = start_host_mount(r);
	if (e < 0 || !r->engine)
		return e;
	/* Asked once per engine in this runtime directory. */
	int sees = fsbox_remembered(r->s.rundir, r->engine);
	if (sees < 0) {
		const char *probe =
			engine_has_image(r->engine, r->fs_image) ? r->fs_image : r->o->image;
		sees = fsbox_engine_sees_mounts(r->engine, probe, r->s.mountpoint);
		if (sees < 0) {
			/* If it does not, the container sees no project at all
			 * (docker refuses the bind) or a closed directory. */
			sandy_note(
				"cannot ask %s whether it sees this host's mounts (a container of "
				"image '%s'); serving on this host",
				r->engine, probe);
			return 0;
		}
		fsbox_remember(r->s.rundir, r->engine, sees);
	}
	if (sees)
		return 0;
	/* The agent would start on the closed directory under the mount. */
	if (r->o->fs_mode == SANDY_FS_MODE_HOST) {
		sandy_error("%s does not see this host's mounts (its engine runs elsewhere), so "
			    "sandyfs cannot serve on this host for it; let sandy choose "
			    "(--fs-mode=auto) or serve in the engine's world (--fs-mode=container)",
			    r->engine);
		return -EXDEV;
	}
	if (!r->o->quiet)
		sandy_note(
			"%s does not see this host's mounts (its engine runs elsewhere); sandyfs "
			"serves in a container of its own there (--fs-mode=container)",
			r->engine);
	if ((e = sandyfs_unmount(r->fs.path, r->s.mountpoint)) < 0)
		return e;
	r->mounted = false;
	sandyfs_wait_exit(&r->daemon, 2000);
	sandyfs_unwatch(&r->daemon);
	return start_box(r);
}

/* With the project at the top of a git work tree, the agent gets its own
 * repository at .git (sandyfs --private-git), layered on the project's
 * objects, which it sees at RUN/host-git. */
static int agent_repository(struct run *r)
{
	int e = agentgit_host_dir(r->project, &r->host_git);

	if (e < 0)
		sandy_note("cannot read the git repository of '%s' (%s); its .git stays read-only "
			   "and the agent cannot commit",
			   r->shown, strerror(-e));
	if (e <= 0) {
		if (r->o->push_gate)
			sandy_note("--push-gate: '%s' is not the top of a git work tree; nothing "
				   "to gate",
				   r->shown);
		return 0;
	}
	r->host_git_seen = agentgit_seen_at(r->engine ? "/run/sandy" : r->s.dir);
	if (!r->host_git_seen)
		return -ENOMEM;
	if (r->o->push_gate && !r->fs.path) {
		sandy_error("--push-gate binds this host's sandyfs into the container, and none "
			    "runs on this host");
		return -ENOTSUP;
	}
	return r->o->push_gate ? agentgit_gate_find(r->fs.path, &r->gate) : 0;
}

static int write_policy_note(struct run *r)
{
	cleanup_free char *text = NULL;
	struct policy_note n = {
		.rules = r->fs.argv.n ? &r->rules : NULL,
		.workspace = r->engine ? "/workspace" : r->project,
		.denials = r->engine ? "/run/sandy/denials.jsonl" : r->s.audit,
		.home = r->world.home,
		.shared = getenv("SANDY_SHARE_DIR") && *getenv("SANDY_SHARE_DIR"),
		.private_git = r->host_git_seen != NULL,
		.push_gate = r->gate.hooks != NULL,
		.container = r->engine != NULL,
		.network = r->o->network,
		.allow = &r->allow,
	};
	int e = policy_note_text(&n, &text);

	if (e == 0)
		e = sandy_write_file(r->s.policy, text, strlen(text), 0644);
	if (e < 0)
		sandy_error("cannot write the policy note '%s': %s", r->s.policy, strerror(-e));
	return e;
}

/* The agent's home and the rest of its world, at /home/sandy in a
 * container; without one, at the user's own home path, which the agent's
 * home replaces. */
static int build_world(struct run *r)
{
	const char *home = r->engine ? "/home/sandy" : world_user_home(&r->user);

	if (!home) {
		sandy_error("cannot run without a container: uid %u has no home directory",
			    (unsigned)r->user.uid);
		return -ENOENT;
	}
	struct world_spec spec = {
		.agent = r->o->agent,
		.user = &r->user,
		.home = home,
		.run = r->engine ? "/run/sandy" : r->s.dir,
		.session_dir = r->s.dir,
		.session_id = r->s.id,
		.env_args = &r->o->env_args,
		.keep_path = !r->engine,
		.workspace = r->engine ? "/workspace" : r->project,
		.host_git = r->host_git_seen ? r->host_git : NULL,
		.gate = r->gate.hooks ? &r->gate : NULL,
		.tty = isatty(STDIN_FILENO),
		.program = !r->engine && r->o->command ? r->o->command[0] : NULL,
	};
	return world_build(&spec, &r->world);
}

/* The sandbox's limits: its cgroup, recorded for the sweep of a session
 * that does not end cleanly, or rlimits. */
static int sandbox_limits(struct run *r)
{
	int e = nslimits_prepare(&r->limits, r->s.id, &r->nslimits);

	if (e < 0) {
		sandy_error("out of memory");
		return e;
	}
	if (r->nslimits.cgroup)
		e = session_record(&r->s, "cgroup", r->nslimits.cgroup);
	if (e == 0 && r->nslimits.cgroup_memory)
		e = session_record(&r->s, "cgroup-memory", r->nslimits.cgroup_memory);
	if (e < 0) {
		sandy_error("cannot write to session directory '%s': %s", r->s.dir, strerror(-e));
		return e;
	}
	if (r->nslimits.how == NSLIMITS_RLIMITS && r->user.uid == 0 && !r->o->quiet)
		sandy_note("the sandbox's processes are not limited: the kernel holds root to no "
			   "process rlimit, and sandy can make no cgroup here (%s); its memory is "
			   "limited per process",
			   r->nslimits.why ? r->nslimits.why : "no cgroup");
	return 0;
}

static int start_command(struct run *r)
{
	if (!r->engine) {
		int e = sandbox_limits(r);
		if (e < 0)
			return e;
		struct nsrun_spec spec = {
			.bwrap = r->bwrap,
			.project = r->project,
			.view = r->mounted ? r->s.mountpoint : NULL,
			.session_dir = r->s.dir,
			.user = &r->user,
			.world = &r->world,
			.network = r->o->network,
			.proxy_socket = r->gateway.proxy_socket,
			.limits = &r->nslimits,
			.command = r->o->command,
		};
		return nsrun_start(&spec, &r->child);
	}
	struct container_spec spec = {
		.engine = r->engine,
		.image = r->o->image,
		.name = r->container,
		.session_id = r->s.id,
		.project = r->project,
		.workspace = r->in_engine ? r->box.mountpoint
			     : r->mounted ? r->s.mountpoint
					  : r->project,
		.audit = r->s.audit,
		.policy = r->s.policy,
		.uid = r->user.uid,
		.gid = r->user.gid,
		.tty = isatty(STDIN_FILENO),
		.world = &r->world,
		.command = r->o->command,
	};
	cleanup_free char *network = NULL;
	if (r->o->network == EGRESS_NONE)
		spec.network = "none";
	else if (r->gateway.running) {
		network = sandy_asprintf("container:%s", r->gateway.name);
		if (!network)
			return -ENOMEM;
		spec.network = network;
	}
	struct mount_entry m;
	/* docker refuses rslave on a mount that is not shared or slave. */
	spec.rslave = r->in_engine || (r->mounted && mount_lookup(r->s.mountpoint, &m) > 0 &&
				       (m.shared || m.slave));
	spec.limits = r->limits;
	int e = engine_run(&spec, &r->child);
	if (e < 0)
		sandy_error("cannot run '%s': %s", r->engine, strerror(-e));
	return e;
}

static void announce(const struct run *r)
{
	if (r->in_engine)
		sandy_note("serving '%s' through sandyfs in a container of its own (image %s) at "
			   "/workspace in a %s container (image %s)",
			   r->shown, r->fs_image, r->engine, r->o->image);
	else if (r->engine && r->fs.argv.n)
		sandy_note("serving '%s' through sandyfs on this host at /workspace in a %s "
			   "container (image %s)",
			   r->shown, r->engine, r->o->image);
	else if (r->engine)
		sandy_note("bind-mounting '%s' at /workspace in a %s container (image %s), without "
			   "policy (--fs=bind)",
			   r->shown, r->engine, r->o->image);
	else if (r->fs.argv.n)
		sandy_note("serving '%s' through sandyfs in a bubblewrap sandbox, without a "
			   "container",
			   r->shown);
	else
		sandy_note("running in '%s' in a bubblewrap sandbox, without policy or container "
			   "(--fs=bind --runtime=none)",
			   r->shown);
}

static int choose_allowlist(struct run *r)
{
	if (r->o->network != EGRESS_FILTERED)
		return 0;
	return gateway_allowlist(r->o->agent, &r->rules.sources, &r->o->allow_args, &r->user,
				 &r->allow);
}

/* The network gateway the container joins; without a container, the
 * proxy that the sandbox's bridge reaches. */
static int start_gateway(struct run *r)
{
	if (r->o->network == EGRESS_OPEN && !r->engine) {
		sandy_note("warning: --network=open: the command shares this machine's network: "
			   "it reaches any host, this machine's services on loopback and its "
			   "abstract Unix sockets; nothing filters or logs its traffic");
		return 0;
	}
	if (r->o->network == EGRESS_OPEN) {
		sandy_note("warning: --network=open: the agent reaches any host; nothing "
			   "filters or logs its traffic");
		return 0;
	}
	if (r->o->network != EGRESS_FILTERED)
		return 0;
	struct gateway_spec spec = {
		.engine = r->engine,
		.image = r->gateway_image,
		.session_dir = r->s.dir,
		.session_id = r->s.id,
		.project = r->project,
		.user = &r->user,
		.allow = &r->allow,
	};
	if (!r->engine) {
		/* `sandy allow` finds the session by it. */
		int e = session_record(&r->s, "allowlist", "proxy");
		if (e < 0) {
			sandy_error("cannot write to session directory '%s': %s", r->s.dir,
				    strerror(-e));
			return e;
		}
		return gateway_start_proxy(&spec, &r->gateway);
	}
	cleanup_free char *name = sandy_asprintf("sandy-%s-net", r->s.id);
	int e = name ? session_record(&r->s, "gateway", name) : -ENOMEM;
	if (e == 0)
		e = session_record(&r->s, "allowlist", "gateway");
	if (e < 0) {
		sandy_error("cannot write to session directory '%s': %s", r->s.dir, strerror(-e));
		return e;
	}
	return gateway_start(&spec, r->user.uid, &r->gateway);
}

static int setup(struct run *r)
{
	cleanup_free char *rundir = NULL;
	int e;

	if ((e = block_signals(r)) < 0) {
		sandy_error("cannot set up signal handling: %s", strerror(-e));
		return e;
	}
	if ((e = session_rundir(&rundir)) < 0)
		return e;
	session_sweep(rundir, r->fs.path);
	if ((e = session_create(rundir, r->project, &r->s)) < 0)
		return e;
	r->have_session = true;
	/* Through sudo, bubblewrap runs as the user and must reach the mount
	 * to bind it (traverse, not list). */
	if (!r->engine && r->user.via_sudo && chmod(r->s.view, 0711) < 0) {
		e = -errno;
		sandy_error("cannot open '%s' to uid %u: %s", r->s.view, (unsigned)r->user.uid,
			    strerror(-e));
		return e;
	}
	if (r->engine) {
		r->container = sandy_asprintf("sandy-%s", r->s.id);
		if (!r->container)
			return -ENOMEM;
		if ((e = session_record(&r->s, "runtime", r->engine)) < 0 ||
		    (e = session_record(&r->s, "container", r->container)) < 0) {
			sandy_error("cannot write to session directory '%s': %s", r->s.dir,
				    strerror(-e));
			return e;
		}
	}
	e = summary_snapshot_take(r->project, &r->launch);
	if (e < 0)
		sandy_note("cannot read the git status of '%s' (%s); the summary will not list "
			   "changed files",
			   r->shown, strerror(-e));
	/* Created before the mount: the container binds it read-only, and
	 * sandyfs appends to it. */
	if ((e = sandy_write_file(r->s.audit, "", 0, 0644)) < 0) {
		sandy_error("cannot create audit log '%s': %s", r->s.audit, strerror(-e));
		return e;
	}
	if (r->fs.argv.n && (e = agent_repository(r)) < 0)
		return e;
	if (r->fs.argv.n && (e = start_serving(r)) < 0)
		return e;
	if ((e = build_world(r)) < 0)
		return e;
	/* Asked once: the note says it, the allowlist's registries follow it. */
	if (r->fs.argv.n)
		policy_rules_fetch(&r->fs, &r->o->rule_args, r->host_git_seen != NULL, &r->rules);
	if ((e = choose_allowlist(r)) < 0)
		return e;
	if ((e = write_policy_note(r)) < 0)
		return e;
	if (!r->o->quiet)
		announce(r);
	if ((e = start_gateway(r)) < 0)
		return e;
	return start_command(r);
}

/* Asks the command to end: the container through its engine (which
 * escalates to SIGKILL after the grace period), a plain process with SIG. */
static void stop_command(struct run *r, int sig)
{
	if (r->stopping || r->child <= 0)
		return;
	r->stopping = true;
	if (r->engine) {
		engine_stop(r->engine, r->container, STOP_GRACE);
		deadline_in(&r->kill_at, CLIENT_GRACE);
	} else {
		/* To the command, which may end cleanly; bubblewrap itself would
		 * die at once and take the sandbox along. */
		nsrun_interrupt(r->child, sig);
		deadline_in(&r->kill_at, STOP_GRACE);
	}
}

static bool reap(struct run *r)
{
	int ws;
	pid_t p = waitpid(r->child, &ws, WNOHANG);

	if (p != r->child)
		return false;
	r->status = proc_status(ws);
	r->child = -1;
	return true;
}

static void on_signal(struct run *r, const struct platform_signal *si)
{
	int sig = si->signo;

	if (sig == SIGCHLD)
		return;
	/* Ctrl-C at a terminal: without a container the command decides for
	 * itself (an interactive shell just drops the line). It is in a
	 * session of its own, away from the terminal, so sandy hands it on. */
	if (sig == SIGINT && !r->engine && si->from_terminal) {
		if (r->child > 0)
			nsrun_interrupt(r->child, SIGINT);
		return;
	}
	if (r->stopping)
		return;
	r->stopped_by = sig;
	sandy_note("received %s; stopping the %s", signal_name(sig),
		   r->engine ? "container" : "command");
	stop_command(r, sig);
}

static void wait_for_command(struct run *r)
{
	while (r->child > 0) {
		int watched = r->in_engine ? r->box.waiter_fd : r->daemon.fd;
		bool serving = (r->mounted || r->in_engine) && !r->sandyfs_died;
		struct pollfd p[2] = {{.fd = r->sigfd, .events = POLLIN},
				      {.fd = watched, .events = POLLIN}};
		nfds_t np = serving && watched >= 0 ? 2 : 1;
		long timeout = -1;
		if ((serving && watched < 0) || r->gateway.running)
			timeout = 500; /* no pidfd: poll the daemon; the gateway's logs */
		if (r->stopping) {
			long left = ms_until(&r->kill_at);
			timeout = left < 0 ? 0 : (timeout < 0 || left < timeout ? left : timeout);
		}
		if (poll(p, np, (int)timeout) < 0 && errno != EINTR)
			break;
		struct platform_signal si;
		while (platform_signals_read(r->sigfd, &si) > 0)
			on_signal(r, &si);
		if (r->gateway.running)
			gateway_drain(&r->gateway, false);
		if (reap(r))
			break;
		if (r->in_engine && !r->sandyfs_died && !fsbox_alive(&r->box)) {
			r->sandyfs_died = true;
			sandy_error("sandyfs stopped serving '%s' (its container '%s' is gone); "
				    "stopping the container",
				    r->shown, r->box.name);
			stop_command(r, SIGTERM);
		}
		if (r->mounted && !r->sandyfs_died && !sandyfs_alive(&r->daemon)) {
			r->sandyfs_died = true;
			sandy_error("sandyfs stopped serving '%s' (its daemon, pid %ld, is gone); "
				    "stopping the %s",
				    r->shown, (long)r->daemon.pid,
				    r->engine ? "container" : "command");
			stop_command(r, SIGTERM);
		}
		if (r->stopping && ms_until(&r->kill_at) <= 0) {
			kill(r->child, SIGKILL);
			r->status = proc_wait(r->child);
			r->child = -1;
		}
	}
}

static void teardown(struct run *r, bool ran)
{
	if (r->child > 0) {
		/* Setup failed after the command started: never leave it. */
		stop_command(r, SIGTERM);
		kill(r->child, SIGKILL);
		proc_wait(r->child);
		r->child = -1;
	}
	if (r->container)
		engine_remove(r->engine, r->container);
	/* With the sandbox gone, what it left in its cgroup goes too. */
	nslimits_release(&r->nslimits);
	gateway_stop(&r->gateway);
	gateway_drain(&r->gateway, true);
	/* Its audit log is complete once it has stopped. */
	if (r->in_engine)
		fsbox_stop(&r->box, r->sandyfs_died);
	if (r->mounted) {
		if (sandyfs_unmount(r->fs.path, r->s.mountpoint) == 0)
			r->mounted = false;
		/* The audit log is complete once the daemon is gone. */
		sandyfs_wait_exit(&r->daemon, 2000);
		if (!r->mounted)
			sandyfs_end(&r->daemon, 2000);
	}
	if (r->view_shared && !r->mounted) {
		if (platform_unmount(r->s.view, false) < 0)
			platform_unmount(r->s.view, true);
		r->view_shared = false;
	}
	if (ran && !r->o->quiet) {
		struct denial_stats *d = NULL;
		int e = r->fs.argv.n ? summary_denials_read(r->s.audit, &d) : 0;
		if (e < 0)
			sandy_note("cannot read the audit log '%s': %s", r->s.audit, strerror(-e));
		struct summary_policy policy = {&r->fs, &r->o->rule_args};
		summary_print(stderr, r->project, r->launch, d, r->fs.argv.n ? &policy : NULL);
		summary_denials_free(d);
		if (r->host_git_seen && !r->sandyfs_died)
			agentgit_summary(stderr, &r->fs, &r->o->rule_args);
		gateway_summary(stderr, &r->gateway);
	}
	sandyfs_unwatch(&r->daemon);
	/* A mount that would not go keeps its directory: never remove
	 * around it. The next sandy cleans it up. */
	if (r->have_session)
		session_end(&r->s, !r->mounted && !r->view_shared);
	unblock_signals(r);
}

static void report_end(const struct run *r)
{
	if (r->sandyfs_died || r->stopped_by)
		return;
	if (r->engine && r->status == 125)
		sandy_error("%s could not start the container (status 125)", r->engine);
	else if (r->status > 128 && r->status < 128 + 65)
		sandy_note("the command was killed by %s (exit status %d)",
			   signal_name(r->status - 128), r->status);
}

int run_session(const struct sandy_opts *o)
{
	struct run r = {.o = o,
			.sigfd = -1,
			.child = -1,
			.daemon = {.pid = -1, .fd = -1},
			.box = {.waiter = -1, .waiter_fd = -1},
			.gateway = {.log_fd = -1, .proxy = -1}};
	int status;

	if (host_checks(&r) < 0) {
		status = SANDY_EXIT_FAILURE;
		goto out;
	}
	if (setup(&r) < 0) {
		teardown(&r, false);
		status = SANDY_EXIT_FAILURE;
		goto out;
	}
	wait_for_command(&r);
	report_end(&r);
	teardown(&r, true);
	if (r.sandyfs_died)
		status = SANDY_EXIT_FAILURE;
	else if (r.stopped_by)
		status = 128 + r.stopped_by;
	else
		status = r.status;
out:
	summary_snapshot_free(r.launch);
	host_user_free(&r.user);
	sandyfs_prog_free(&r.fs);
	free(r.bwrap);
	free(r.container);
	free(r.host_git);
	free(r.host_git_seen);
	free(r.shown);
	agentgit_gate_free(&r.gate);
	fsbox_free(&r.box);
	world_free(&r.world);
	gateway_free(&r.gateway);
	nslimits_free(&r.nslimits);
	strv_free(&r.allow);
	policy_rules_free(&r.rules);
	return status;
}
