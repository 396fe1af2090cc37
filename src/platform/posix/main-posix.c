/* main: the arguments arrive as the bytes the system passed, which
 * cudnnctl takes as UTF-8 (as it does every path on POSIX). */
int cctl_cli_main(int argc, char **argv);

int main(int argc, char **argv)
{
	return cctl_cli_main(argc, argv);
}
