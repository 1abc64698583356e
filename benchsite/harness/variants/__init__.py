"""Runs of variants: the copies of a recipe's subjects that an A/B run or a release sweep measures (copies), the
package environments they run in (envs), and the source files a dir: or rev: variant changes (files)."""
