int cctl_absent_symbol(void) { return 0; }
