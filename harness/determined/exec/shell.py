"""A shell task: OpenSSH's sshd (Debian's openssh-server) on a free loopback port, as the user
the task runs as, accepting only the task's key. `det shell open` reaches it through the
master's /proxy/{task_id}/ tunnel."""

import os
import pwd
import shutil
import subprocess
import sys

from determined.exec import _task_service


def main() -> int:
    sshd = shutil.which("sshd") or ("/usr/sbin/sshd" if os.path.exists("/usr/sbin/sshd") else None)
    if sshd is None:
        print(
            "shell: sshd is not installed where this task runs (Debian package openssh-server)",
            file=sys.stderr,
        )
        return 1
    key = os.environ.get("DET_SHELL_AUTHORIZED_KEY", "").strip()
    if not key:
        print("shell: DET_SHELL_AUTHORIZED_KEY is not set", file=sys.stderr)
        return 1
    work = os.getcwd()
    conf_dir = os.path.join(work, ".det-sshd")
    os.makedirs(conf_dir, mode=0o700, exist_ok=True)
    host_key = os.path.join(conf_dir, "host_ed25519")
    if not os.path.exists(host_key):
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", host_key], check=True
        )
    auth_keys = os.path.join(conf_dir, "authorized_keys")
    with open(auth_keys, "w") as f:
        f.write(key + "\n")
    os.chmod(auth_keys, 0o600)
    port = _task_service.free_port()
    user = pwd.getpwuid(os.geteuid()).pw_name
    env_file = os.path.join(conf_dir, "environment")
    # The shell's sessions see the task's environment (DET_*, PATH, PYTHONPATH).
    with open(env_file, "w") as f:
        for k, v in os.environ.items():
            if "\n" not in v and k not in ("DET_SHELL_AUTHORIZED_KEY",):
                f.write(f"export {k}={_quote(v)}\n")
    # Every session (a login shell or `ssh ... CMD`) starts in the task's environment and dir.
    session = os.path.join(conf_dir, "session.sh")
    with open(session, "w") as f:
        f.write(
            "#!/bin/sh\n"
            f". {_quote(env_file)}\n"
            f"cd {_quote(work)}\n"
            'if [ -n "$SSH_ORIGINAL_COMMAND" ]; then exec /bin/sh -c "$SSH_ORIGINAL_COMMAND"; fi\n'
            'exec "${SHELL:-/bin/sh}" -l\n'
        )
    os.chmod(session, 0o755)
    config = os.path.join(conf_dir, "sshd_config")
    with open(config, "w") as f:
        f.write(
            f"Port {port}\n"
            "ListenAddress 127.0.0.1\n"
            f"HostKey {host_key}\n"
            f"AuthorizedKeysFile {auth_keys}\n"
            f"PidFile {os.path.join(conf_dir, 'sshd.pid')}\n"
            f"AllowUsers {user}\n"
            "PasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\n"
            "PubkeyAuthentication yes\n"
            "PermitRootLogin prohibit-password\n"
            "StrictModes no\n"
            "UsePAM no\n"
            "PrintMotd no\n"
            f"ForceCommand {session}\n"
        )
    # sshd needs its privilege separation directory when run as root.
    if os.geteuid() == 0:
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
    argv = [sshd, "-D", "-e", "-f", config]
    return _task_service.run_service(argv, port, extra={"sshUser": user})


def _quote(v: str) -> str:
    return "'" + v.replace("'", "'\\''") + "'"


if __name__ == "__main__":
    sys.exit(main())
