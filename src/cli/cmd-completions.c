/* cudnnctl completions bash|zsh|powershell: a completion script made from
 * the command table, so that it offers every command and option the binary
 * has; installed versions come from `cudnnctl list --json` as you type. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* What an option's value or a positional argument completes to. */
enum kind { K_NONE, K_PATH, K_WORDS, K_INSTALLED };

static enum kind kind_of(const char *cmd, const char *v)
{
	if (!v)
		return K_NONE;
	if (strstr(v, "FILE") || strstr(v, "DIR") || strstr(v, "ARCHIVE"))
		return K_PATH;
	if (strstr(v, "VERSION"))
		return strcmp(cmd, "download") ? K_INSTALLED : K_NONE;
	if (strspn(v, "abcdefghijklmnopqrstuvwxyz|") == strlen(v))
		return K_WORDS;
	return K_NONE;
}

/* "sh|powershell|cmd" -> "sh powershell cmd" */
static void words(FILE *f, const char *v)
{
	for (; *v; v++)
		fputc(*v == '|' ? ' ' : *v, f);
}

typedef void (*each_fn)(FILE *f, const struct cli_command *c,
			const struct cli_option *o, void *ud);

/* Every option of c, its own then the common ones. */
static void each_option(FILE *f, const struct cli_command *c, each_fn fn, void *ud)
{
	for (const struct cli_option *o = c->options; o && o->name; o++)
		fn(f, c, o, ud);
	for (const struct cli_option *o = cli_common_options; o->name; o++)
		fn(f, c, o, ud);
}

static void bash_opt(FILE *f, const struct cli_command *c,
		     const struct cli_option *o, void *ud)
{
	(void)c;
	(void)ud;
	fprintf(f, " %s", o->name);
}

static void bash_value(FILE *f, const struct cli_command *c,
		       const struct cli_option *o, void *ud)
{
	(void)ud;
	switch (kind_of(c->name, o->value)) {
	case K_PATH:
		fprintf(f, "\t\t%s) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n",
			o->name);
		break;
	case K_WORDS:
		fprintf(f, "\t\t%s) COMPREPLY=($(compgen -W \"", o->name);
		words(f, o->value);
		fputs("\" -- \"$cur\")); return ;;\n", f);
		break;
	default:
		if (o->value)
			fprintf(f, "\t\t%s) return ;;\n", o->name);
	}
}

static void bash(FILE *f)
{
	fputs("# bash completion for cudnnctl: eval \"$(cudnnctl completions bash)\"\n"
	      "# in ~/.bashrc, or save it as\n"
	      "# ~/.local/share/bash-completion/completions/cudnnctl\n"
	      "_cudnnctl_installed() {\n"
	      "\tcudnnctl list --json 2>/dev/null | tr ',{' '\\n\\n' |\n"
	      "\t\tsed -n 's/^\"version\":\"\\([^\"]*\\)\"$/\\1/p'\n"
	      "}\n"
	      "_cudnnctl() {\n"
	      "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
	      "\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"",
	      f);
	for (const struct cli_command *c = cli_commands; c->name; c++)
		fprintf(f, "%s ", c->name);
	fputs("help completions --help --version\" -- \"$cur\"))\n"
	      "\t\treturn\n"
	      "\tfi\n"
	      "\tcase ${COMP_WORDS[1]} in\n",
	      f);
	for (const struct cli_command *c = cli_commands; c->name; c++) {
		fprintf(f, "\t%s)\n\t\tcase $prev in\n", c->name);
		each_option(f, c, bash_value, NULL);
		fputs("\t\tesac\n\t\tif [[ $cur == -* ]]; then\n"
		      "\t\t\tCOMPREPLY=($(compgen -W \"",
		      f);
		each_option(f, c, bash_opt, NULL);
		fputs("\" -- \"$cur\"))\n\t\t\treturn\n\t\tfi\n", f);
		switch (kind_of(c->name, c->args)) {
		case K_PATH:
			fputs("\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n", f);
			break;
		case K_INSTALLED:
			fputs("\t\tCOMPREPLY=($(compgen -W \"$(_cudnnctl_installed)\" -- "
			      "\"$cur\"))\n",
			      f);
			break;
		case K_WORDS:
			fputs("\t\tCOMPREPLY=($(compgen -W \"", f);
			words(f, c->args);
			fputs("\" -- \"$cur\"))\n", f);
			break;
		default:
			break;
		}
		fputs("\t\t;;\n", f);
	}
	fputs("\thelp) COMPREPLY=($(compgen -W \"", f);
	for (const struct cli_command *c = cli_commands; c->name; c++)
		fprintf(f, "%s ", c->name);
	fputs("\" -- \"$cur\")) ;;\n"
	      "\tcompletions) COMPREPLY=($(compgen -W \"bash zsh powershell\" -- "
	      "\"$cur\")) ;;\n"
	      "\tesac\n"
	      "}\n"
	      "complete -o filenames -F _cudnnctl cudnnctl\n",
	      f);
}

/* Text inside single quotes, with [ ] : that zsh's specs use replaced. */
static void zsh_text(FILE *f, const char *s)
{
	for (; s && *s; s++)
		if (*s == '\'')
			fputs("'\\''", f);
		else if (*s == '[')
			fputc('(', f);
		else if (*s == ']')
			fputc(')', f);
		else if (*s == ':')
			fputc(',', f);
		else
			fputc(*s, f);
}

static void zsh_opt(FILE *f, const struct cli_command *c,
		    const struct cli_option *o, void *ud)
{
	(void)ud;
	fputs(" \\\n\t\t\t'", f);
	fputs(o->name, f);
	fputc('[', f);
	zsh_text(f, o->help);
	fputc(']', f);
	switch (kind_of(c->name, o->value)) {
	case K_PATH:
		fputs(":", f);
		zsh_text(f, o->value);
		fputs(":_files", f);
		break;
	case K_WORDS:
		fputs(":", f);
		zsh_text(f, o->value);
		fputs(":(", f);
		words(f, o->value);
		fputc(')', f);
		break;
	default:
		if (o->value) {
			fputs(":", f);
			zsh_text(f, o->value);
			fputc(':', f);
		}
	}
	fputc('\'', f);
}

static void zsh(FILE *f)
{
	fputs("#compdef cudnnctl\n"
	      "# zsh completion for cudnnctl: save as _cudnnctl in a folder of\n"
	      "# $fpath (or eval \"$(cudnnctl completions zsh)\" after compinit)\n"
	      "_cudnnctl_installed() {\n"
	      "\tlocal -a v\n"
	      "\tv=(${(f)\"$(cudnnctl list --json 2>/dev/null | tr ',{' '\\n\\n' |\n"
	      "\t\tsed -n 's/^\"version\":\"\\([^\"]*\\)\"$/\\1/p')\"})\n"
	      "\t_describe 'installed version' v\n"
	      "}\n"
	      "_cudnnctl() {\n"
	      "\tlocal -a cmds\n"
	      "\tcmds=(\n",
	      f);
	for (const struct cli_command *c = cli_commands; c->name; c++) {
		fprintf(f, "\t\t'%s:", c->name);
		zsh_text(f, c->summary);
		fputs("'\n", f);
	}
	fputs("\t\t'help:the help of cudnnctl or of a command'\n"
	      "\t\t'completions:print a completion script (bash, zsh, powershell)'\n"
	      "\t)\n"
	      "\tif (( CURRENT == 2 )); then\n"
	      "\t\t_describe -t commands 'cudnnctl command' cmds\n"
	      "\t\treturn\n"
	      "\tfi\n"
	      "\tlocal cmd=$words[2]\n"
	      "\tshift words\n"
	      "\t(( CURRENT-- ))\n"
	      "\tcase $cmd in\n",
	      f);
	for (const struct cli_command *c = cli_commands; c->name; c++) {
		fprintf(f, "\t%s)\n\t\t_arguments", c->name);
		each_option(f, c, zsh_opt, NULL);
		switch (kind_of(c->name, c->args)) {
		case K_PATH:
			fputs(" \\\n\t\t\t'1:archive or version:_files'", f);
			break;
		case K_INSTALLED:
			fputs(" \\\n\t\t\t'1:version:_cudnnctl_installed'", f);
			break;
		case K_WORDS:
			fputs(" \\\n\t\t\t'1:action:(", f);
			words(f, c->args);
			fputs(")'", f);
			break;
		default:
			break;
		}
		fputs("\n\t\t;;\n", f);
	}
	fputs("\thelp) _describe -t commands 'cudnnctl command' cmds ;;\n"
	      "\tcompletions) _values 'shell' bash zsh powershell ;;\n"
	      "\tesac\n"
	      "}\n"
	      "if [ \"$funcstack[1]\" = \"_cudnnctl\" ]; then\n"
	      "\t_cudnnctl \"$@\"\n"
	      "else\n"
	      "\tcompdef _cudnnctl cudnnctl\n"
	      "fi\n",
	      f);
}

static void ps_opt(FILE *f, const struct cli_command *c,
		   const struct cli_option *o, void *ud)
{
	(void)c;
	(void)ud;
	fprintf(f, "'%s',", o->name);
}

static void powershell(FILE *f)
{
	fputs("# PowerShell completion for cudnnctl: add to $PROFILE\n"
	      "#   cudnnctl completions powershell | Out-String | Invoke-Expression\n"
	      "Register-ArgumentCompleter -Native -CommandName 'cudnnctl', "
	      "'cudnnctl.exe' -ScriptBlock {\n"
	      "    param($wordToComplete, $commandAst, $cursorPosition)\n"
	      "    $options = @{\n",
	      f);
	for (const struct cli_command *c = cli_commands; c->name; c++) {
		fprintf(f, "        '%s' = @(", c->name);
		each_option(f, c, ps_opt, NULL);
		fputs("'--help')\n", f);
	}
	fputs("    }\n"
	      "    $words = @($commandAst.CommandElements | ForEach-Object { $_.ToString() })\n"
	      "    $given = $words.Count - $(if ($wordToComplete) { 1 } else { 0 })\n"
	      "    if ($given -le 1) {\n"
	      "        $candidates = @($options.Keys) + @('help', 'completions')\n"
	      "    } elseif ($wordToComplete -like '-*' -and $options.ContainsKey($words[1])) {\n"
	      "        $candidates = $options[$words[1]]\n"
	      "    } elseif ($words[1] -in @('switch', 'uninstall', 'verify')) {\n"
	      "        $candidates = @(cudnnctl list --json 2>$null | ConvertFrom-Json |\n"
	      "            ForEach-Object { $_.installed } | ForEach-Object { $_.version })\n"
	      "    } else {\n"
	      "        return\n"
	      "    }\n"
	      "    $candidates | Where-Object { $_ -like \"$wordToComplete*\" } | Sort-Object |\n"
	      "        ForEach-Object {\n"
	      "            [System.Management.Automation.CompletionResult]::new($_, $_, "
	      "'ParameterValue', $_)\n"
	      "        }\n"
	      "}\n",
	      f);
}

int cli_completions(const char *shell)
{
	if (!strcmp(shell, "bash"))
		bash(stdout);
	else if (!strcmp(shell, "zsh"))
		zsh(stdout);
	else if (!strcmp(shell, "powershell") || !strcmp(shell, "pwsh"))
		powershell(stdout);
	else {
		cli_say("error", "no completions for '%s': bash, zsh or powershell",
			shell);
		return cctl_exit_status(CCTL_EUSAGE);
	}
	return 0;
}
