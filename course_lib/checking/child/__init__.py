"""The sandboxed child's code, stdlib only.

The grader never runs these modules itself (except `seccomp`, whose filter it can inspect): it
compiles them once and ships the code objects in the child's config frame, so the child reads no
file of the course tree (`_child.py` is the only script it starts from) and none of these modules is
registered in the child's `sys.modules`, where student code could find and patch it.
"""

# Load order in the child: each module may use only the stdlib and the ones before it.
MODULES = ("framing", "seccomp", "namespaces", "guard", "isolated", "values", "harness")
