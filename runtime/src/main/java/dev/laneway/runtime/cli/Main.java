package dev.laneway.runtime.cli;

import io.quarkus.runtime.annotations.QuarkusMain;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;

/**
 * The process entry point. Every subcommand but {@code serve} runs here without starting the server; {@code serve}
 * checks its command line first and then starts Quarkus.
 */
@QuarkusMain
public final class Main {
    private Main() {
    }

    public static void main(String... args) {
        PrintWriter out = new PrintWriter(System.out, true, StandardCharsets.UTF_8);
        PrintWriter err = new PrintWriter(System.err, true, StandardCharsets.UTF_8);
        System.exit(LanewayCommand.execute(args, out, err));
    }
}
