"""What NVIDIA/cutlass#3003 reports (Blackwell/Thor): the only numbers in the report not measured by it."""

ISSUE = "NVIDIA/cutlass#3003"
ISSUE_KERNEL_US = 91.0
ISSUE_LOOP_US = 625.0
