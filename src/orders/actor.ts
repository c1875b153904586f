/** Which door an action came through: recorded with it on the order's timeline. */
export type Actor = "admin-api" | "ops-console";
