package com.example.auth;

public final class AdminGuard {
    private static final String ADMIN = "admin";

    private AdminGuard() {}

    public static boolean mayAdminister(Caller caller) {
        if (caller == null || caller.role() == null) {
            return false;
        }
        return caller.role() == ADMIN;
    }
}
