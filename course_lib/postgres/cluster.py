"""A throwaway PostgreSQL server in a temp dir, from the system's packages (Debian's `postgresql`).

Tests, CI, the store benchmark and the multi-process demo need a real server, not a mock. This
module starts one: `initdb` into a private directory, `pg_ctl start` listening on 127.0.0.1 at a free
port, password auth with a random password (a shared machine's other users cannot connect), and
gives back its URL. Root cannot run `postgres`, so as root the server runs as the system user
`postgres` (or `nobody`) through `runuser`/`setpriv`.

Standard library only (no psycopg): `.ci/run` calls it with the system's python before the course's
venv exists.

    python -m course_lib.postgres.cluster start DIR   # prints the URL, also written to DIR/url
    python -m course_lib.postgres.cluster stop DIR
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

UNPRIVILEGED_USERS = ("postgres", "nobody")
SOCKET_PATH_LIMIT = 100  # a Unix socket path is at most 107 bytes; keep room for ".s.PGSQL.NNNNN"


class ClusterError(RuntimeError):
    """The server could not be started or stopped; the message says why, in Russian."""


def find_bindir() -> Path | None:
    """The directory with `initdb`, `pg_ctl` and `postgres` (None when PostgreSQL is not installed).

    `COURSE_PG_BINDIR` wins; then Debian's /usr/lib/postgresql/<version>/bin (newest first, since
    Debian keeps `initdb` out of PATH); then PATH.
    """
    candidates: list[Path] = []
    if os.environ.get("COURSE_PG_BINDIR"):
        candidates.append(Path(os.environ["COURSE_PG_BINDIR"]))
    debian = glob.glob("/usr/lib/postgresql/*/bin")
    candidates.extend(Path(p) for p in sorted(debian, key=_version_key, reverse=True))
    on_path = shutil.which("pg_ctl")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    for directory in candidates:
        if all((directory / tool).is_file() for tool in ("initdb", "pg_ctl", "postgres")):
            return directory
    return None


def missing_reason() -> str | None:
    """One line saying why no server can be started here, or None when one can."""
    if find_bindir() is None:
        return ("PostgreSQL не установлен (нет initdb/pg_ctl; Debian: apt-get install postgresql, "
                "или COURSE_PG_BINDIR=каталог с ними)")
    if os.geteuid() == 0 and _unprivileged_user() is None:
        return "под root PostgreSQL запускается от системного пользователя, а нет ни postgres, ни nobody"
    return None


@dataclass
class TempCluster:
    """One server in `directory` (created when None). `durable=False` trades crash safety for speed
    (fsync off): right for tests, wrong for a benchmark that compares durable commits."""

    directory: Path | None = None
    durable: bool = True
    url: str | None = None

    def start(self) -> str:
        reason = missing_reason()
        if reason:
            raise ClusterError(reason)
        bindir = find_bindir()
        assert bindir is not None
        if self.directory is None:
            self.directory = Path(tempfile.mkdtemp(prefix="course-pg-"))
        directory = self.directory.resolve()
        directory.mkdir(parents=True, exist_ok=True)
        if len(str(directory)) > SOCKET_PATH_LIMIT:
            raise ClusterError(f"Слишком длинный путь для сокета PostgreSQL: {directory}")
        data = directory / "data"
        if data.exists():
            raise ClusterError(f"В {directory} уже есть кластер: сначала остановите его (stop).")
        password = secrets.token_hex(16)
        (directory / "pwfile").write_text(password + "\n")
        os.chmod(directory / "pwfile", 0o600)
        user = _unprivileged_user() if os.geteuid() == 0 else None
        if user is not None:
            _chown_tree(directory, user)
        port = _free_port()
        run = _runner(user, directory)
        run([str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=scram-sha-256",
             f"--pwfile={directory / 'pwfile'}", "--encoding=UTF8", "--locale=C.UTF-8", "--no-instructions"])
        (directory / "pwfile").unlink()
        options = [f"-p {port}", "-c listen_addresses=127.0.0.1", f"-k {directory}", "-c max_connections=100"]
        if not self.durable:
            options += ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]
        run([str(bindir / "pg_ctl"), "-D", str(data), "-l", str(directory / "server.log"), "-w", "-t", "60",
             "-o", " ".join(options), "start"])
        self.url = f"postgresql://postgres:{password}@127.0.0.1:{port}/postgres"
        url_file = directory / "url"
        url_file.write_text(self.url + "\n")
        os.chmod(url_file, 0o600)
        return self.url

    def stop(self, *, remove: bool = True) -> None:
        if self.directory is None:
            return
        stop(self.directory, remove=remove)

    def __enter__(self) -> TempCluster:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def stop(directory: Path, *, remove: bool = True) -> None:
    """Stop the server in `directory` (fast shutdown) and delete the directory."""
    directory = Path(directory).resolve()
    data = directory / "data"
    bindir = find_bindir()
    if (data / "postmaster.pid").exists() and bindir is not None:
        user = _unprivileged_user() if os.geteuid() == 0 else None
        _runner(user, directory, check=False)(
            [str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]
        )
    if remove:
        shutil.rmtree(directory, ignore_errors=True)


def _runner(user: pwd.struct_passwd | None, cwd: Path, *, check: bool = True):
    def run(command: list[str]) -> None:
        if user is not None:
            command = _as_user(user) + command
        result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=_clean_env())
        if check and result.returncode != 0:
            log = cwd / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise ClusterError(
                f"Команда {Path(command[len(_as_user(user)) if user else 0]).name} завершилась с кодом "
                f"{result.returncode}:\n{result.stdout[-2000:]}{result.stderr[-2000:]}{tail}"
            )

    return run


def _as_user(user: pwd.struct_passwd) -> list[str]:
    if shutil.which("runuser"):
        return ["runuser", "-u", user.pw_name, "--"]
    return ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--init-groups", "--"]


def _unprivileged_user() -> pwd.struct_passwd | None:
    for name in UNPRIVILEGED_USERS:
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    return None


def _chown_tree(directory: Path, user: pwd.struct_passwd) -> None:
    for path in [directory, *directory.rglob("*")]:
        os.chown(path, user.pw_uid, user.pw_gid)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _clean_env() -> dict[str, str]:
    # The server must not inherit a developer's PG* settings (a PGDATA elsewhere, a PGPORT).
    env = {key: value for key, value in os.environ.items() if not key.startswith("PG")}
    env.setdefault("LC_ALL", "C.UTF-8")
    return env


def _version_key(path: str) -> tuple[int, ...]:
    version = Path(path).parent.name
    return tuple(int(part) for part in version.split(".") if part.isdigit())


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("start", "stop"):
        print("Использование: python -m course_lib.postgres.cluster start|stop КАТАЛОГ", file=sys.stderr)
        return 2
    action, directory = argv[0], Path(argv[1])
    try:
        if action == "start":
            print(TempCluster(directory).start())
        else:
            stop(directory)
    except (ClusterError, OSError) as error:
        print(f"PostgreSQL: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
